// output-cut: keep only one node and what it depends on (a suffix cut on the DAG, not on a list).
#include <algorithm>
#include <string>
#include <unordered_set>

#include "passes.h"

namespace reduce::detail {

namespace {
// Sinks are tried by bisection on topological position: the earliest node whose ancestors
// still fail. Branchy graphs are not monotone in that order; node-removal handles what is left.
// When marking outputs hid the failure, an engine fused several nodes the failure needs, and a
// fusion only takes values nothing outside it reads (an engine cannot drop a value another node
// or an output needs: marking them is what broke it). So the fused node before the last reads
// into the last node alone: a node no unit of the candidate feeds that way ends no fusion and is
// not bisected over.
class OutputCut : public SearchState<OutputCut, Bisection> {
 public:
  OutputCut(const ReductionGraph& g, Candidate base, bool fused) : base_(std::make_shared<const Candidate>(std::move(base))) {
    const auto units = g.units_of(*base_);
    std::unordered_set<std::string> observed;
    if (fused)
      for (auto& o : g.outputs_of(*base_)) observed.insert(std::move(o));
    // Whether `unit` is the only reader in the candidate of every value of a kept unit, none of them
    // an output of the candidate.
    const auto ends_a_fusion = [&](size_t unit) {
      const auto read_only_by_unit = [&](const std::string& value) {
        if (value.empty()) return true;
        const auto readers = g.index().consumers(value);
        return !observed.count(value) && std::all_of(readers.begin(), readers.end(), [&](size_t r) {
          return r == unit || !ReductionGraph::keeps(*base_, r);
        });
      };
      const auto preds = g.index().predecessors(unit);
      return std::any_of(preds.begin(), preds.end(), [&](size_t q) {
        const auto& outs = g.graph().nodes[q].outputs;
        return g.is_unit(q) && ReductionGraph::keeps(*base_, q) && std::all_of(outs.begin(), outs.end(), read_only_by_unit);
      });
    };
    std::vector<size_t> sinks;
    for (size_t u : units)
      if (!fused || ends_a_fusion(u)) sinks.push_back(u);
    sinks_ = std::make_shared<const std::vector<size_t>>(std::move(sinks));
    search = Bisection::over(sinks_->size());
    settle(g);
  }
  std::optional<Candidate> make(const ReductionGraph& g, size_t k) const {
    auto kept = g.ancestors_within(*base_, (*sinks_)[k]);
    if (kept.size() == g.size_of(*base_)) return std::nullopt;  // not a reduction
    return g.with_units(*base_, std::move(kept));
  }
  std::optional<Candidate> result() const override { return last_interesting; }
  // Every earlier node's ancestors passed (or are assumed to, where bisection skipped them).
  void conclude(Facts& facts) const override {
    if (last_interesting) facts.single_sink = SingleSink{last_interesting->nodes, (*sinks_)[search.first]};
  }

 private:
  std::shared_ptr<const Candidate> base_;
  std::shared_ptr<const std::vector<size_t>> sinks_;  // the units tried as sinks, in topological order
};
}  // namespace

PassStatePtr start_output_cut(const ReductionGraph& g, const Candidate& best, const Facts& facts) {
  if (g.size_of(best) <= 1 || (facts.single_sink && facts.single_sink->covers(best))) return nullptr;
  return std::make_shared<OutputCut>(g, best, facts.marking_outputs_hides_failure);
}

}  // namespace reduce::detail
