// input-cut: drop a topological prefix; the values crossing its frontier become cut inputs.
#include <algorithm>

#include "passes.h"

namespace reduce::detail {

namespace {
// The index of the shortest failing suffix, in [first, count] (count: none): exponential search
// from the first (Gallop::doubling), that does not step over `closure` (0: none). When the failure
// needs a fusion, an engine fuses an op with the one node it feeds, or what feeds the last node
// alone (ReductionGraph::fusion_closure; `closure`: the index of the shortest suffix holding it),
// often but the value the pattern reads (a LayerNorm's input, read by its first two nodes, is the
// output of a node the closure takes too). So a doubling step that would pass the closure asks the
// suffix a unit short of it instead, then, when that passes, the closure itself, and doubles on
// from there; a failure bisects inside the last step, as without a closure.
struct SuffixSearch {
  Gallop range;
  size_t closure = 0;

  static SuffixSearch over(size_t first, size_t count, size_t closure) {
    SuffixSearch s{Gallop::doubling(count), closure > first && closure < count ? closure : 0};
    s.range.first = std::min(first, count);
    return s;
  }
  std::optional<size_t> probe() const {
    if (range.first >= range.last) return std::nullopt;
    const auto p = range.probe();
    if (!p || !closure || !range.galloping) return p;
    if (range.first == closure) return closure;
    return range.first < closure && *p >= closure ? closure - 1 : *p;
  }
  SuffixSearch advance(bool interesting) const {
    const size_t p = *probe();
    SuffixSearch s = *this;
    if (p == *range.probe()) {
      s.range = range.advance(interesting);
    } else if (interesting) {  // the closure, or a unit short of it, fails: bisect below
      s.range.last = p;
      s.range.galloping = false;
    } else {
      s.range.first = p + 1;
    }
    return s;
  }
};

// Finds the longest removable prefix (removing less is assumed to keep failing). The search starts
// from the largest removals: after first-divergence the diverging node alone usually still fails.
// Candidate i removes the first n-1-i units: i = 0 keeps only the last unit. It doubles the suffix
// kept until one fails, then bisects inside the last doubling: what is needed is a node or a fused
// pattern of a few (Conv+BN 2, a decomposed LayerNorm 7), and finding k units costs about
// 2 log2(k) checks however long the prefix (a gallop to sqrt(n) paid 7 for a LayerNorm in 31 units,
// this 5; bench/RESULTS.md, issue 48).
// When marking outputs hides the failure (it needs a fusion of several nodes), the last node alone
// is not worth a probe (certify still tries every single removal, so a miss costs no minimality),
// and the doubling does not step over what could be fused into the last node (SuffixSearch).
// When a search showed where the failure is born (Facts::single_sink) and the best candidate marks
// more than that node's outputs (a first-divergence prefix marks every value later nodes read),
// the suffixes mark only the sink's outputs: the first failing one is the reproducer with its own
// outputs, and first-divergence need not test the narrowed candidate first. That candidate is
// untested, so the search reaches it too (its last index); when nothing failed, it starts again
// on the best candidate as it is.
class InputCut : public SearchState<InputCut, SuffixSearch> {
 public:
  InputCut(const ReductionGraph& g, Candidate base, bool fused, std::optional<Candidate> tested = std::nullopt)
      : base_(std::make_shared<const Candidate>(std::move(base))), fused_(fused) {
    units_ = std::make_shared<const std::vector<size_t>>(g.units_of(*base_));
    if (tested) tested_ = std::make_shared<const Candidate>(std::move(*tested));
    // An untested base is the search's last candidate; a tested one is known to fail.
    const size_t count = tested_ ? units_->size() : units_->size() - 1;
    search = fused && count > 1 ? SuffixSearch::over(1, count, closure_index(g)) : SuffixSearch::over(0, count, 0);
    settle(g);
  }
  PassStatePtr advance(const ReductionGraph& g, const Answer& answer) const override {
    auto next = SearchState::advance(g, answer);
    const auto& ended = static_cast<const InputCut&>(*next);
    if (ended.probe() || ended.last_interesting || !tested_) return next;
    return std::make_shared<InputCut>(g, *tested_, fused_);
  }
  std::optional<Candidate> make(const ReductionGraph& g, size_t i) const {
    return g.with_units(*base_, std::vector<size_t>(units_->end() - static_cast<std::ptrdiff_t>(i + 1), units_->end()));
  }
  std::optional<Candidate> result() const override { return last_interesting; }

 private:
  // The index of the smallest suffix holding what could be fused into the last unit.
  size_t closure_index(const ReductionGraph& g) const {
    const auto closure = g.fusion_closure(*base_, units_->back());
    const auto first = std::find(units_->begin(), units_->end(), closure.front());
    return static_cast<size_t>(units_->end() - first) - 1;
  }

  std::shared_ptr<const Candidate> base_;
  std::shared_ptr<const std::vector<size_t>> units_;
  bool fused_ = false;
  // When base_ is the untested narrowing: the best candidate, to search once base_'s search ends
  // with nothing failing.
  std::shared_ptr<const Candidate> tested_;
};
}  // namespace

PassStatePtr start_input_cut(const ReductionGraph& g, const Candidate& best, const Facts& facts) {
  if (g.size_of(best) <= 1) return nullptr;
  const bool fused = facts.marking_outputs_hides_failure;
  if (facts.single_sink && facts.single_sink->covers(best)) {
    Candidate narrowed = g.marking(best, g.node_outputs(facts.single_sink->sink));
    if (g.outputs_of(narrowed) != g.outputs_of(best))
      return std::make_shared<InputCut>(g, std::move(narrowed), fused, best);
  }
  return std::make_shared<InputCut>(g, best, fused);
}

}  // namespace reduce::detail
