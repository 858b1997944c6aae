// output-cut: keep only one node and what it depends on (a suffix cut on the DAG, not on a list).
#include "passes.h"

namespace reduce::detail {

namespace {
// Sinks are tried by bisection on topological position: the earliest node whose ancestors
// still fail. Branchy graphs are not monotone in that order; node-removal handles what is left.
// When marking outputs hid the failure, an engine fused several nodes the failure needs: only the
// units that can end a fusion (ReductionGraph::fusion_ends) are bisected over.
class OutputCut : public SearchState<OutputCut, Bisection> {
 public:
  OutputCut(const ReductionGraph& g, Candidate base, bool fused)
      : base_(std::make_shared<const Candidate>(std::move(base))),
        sinks_(std::make_shared<const std::vector<size_t>>(fused ? g.fusion_ends(*base_) : g.units_of(*base_))) {
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
