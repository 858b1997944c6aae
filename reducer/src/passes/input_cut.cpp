// input-cut: drop a topological prefix; the values crossing its frontier become cut inputs.
#include "passes.h"

namespace reduce::detail {

namespace {
// Finds the longest removable prefix (removing less is assumed to keep failing). The search starts
// from the largest removals: after first-divergence the diverging node alone usually still fails.
// Candidate i removes the first n-1-i units: i = 0 keeps only the last unit. It doubles the suffix
// kept until one fails, then bisects inside the last doubling: what is needed is a node or a fused
// pattern of a few (Conv+BN 2, a decomposed LayerNorm 7), and finding k units costs about
// 2 log2(k) checks however long the prefix (a gallop to sqrt(n) paid 7 for a LayerNorm in 31 units,
// this 5; bench/RESULTS.md, issue 48).
// When a search showed where the failure is born (Facts::single_sink) and the best candidate marks
// more than that node's outputs (a first-divergence prefix marks every value later nodes read),
// the suffixes mark only the sink's outputs: the first failing one is the reproducer with its own
// outputs, and first-divergence need not test the narrowed candidate first. That candidate is
// untested, so the search reaches it too (its last index); when nothing failed, it starts again
// on the best candidate as it is.
class InputCut : public SearchState<InputCut, Gallop> {
 public:
  static constexpr size_t kBisectFusedUpTo = 16;
  InputCut(const ReductionGraph& g, Candidate base, bool fused, std::optional<Candidate> tested = std::nullopt)
      : base_(std::make_shared<const Candidate>(std::move(base))), fused_(fused) {
    units_ = std::make_shared<const std::vector<size_t>>(g.units_of(*base_));
    if (tested) tested_ = std::make_shared<const Candidate>(std::move(*tested));
    // An untested base is the search's last candidate; a tested one is known to fail.
    search = Gallop::doubling(tested_ ? units_->size() : units_->size() - 1);
    // A failure that marking outputs hides needs a fusion of several nodes: the last node alone
    // is not worth a probe (certify still tries every single removal, so a miss costs no
    // minimality). On a few units, where such a pattern is a good part of the candidate, the
    // doubling's probes (2, 4, 8 nodes) are as many as a whole bisection: bisect.
    if (fused && search.last > 1) {
      search.first = 1;
      search.galloping = search.last > kBisectFusedUpTo;
    }
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
