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
class InputCut : public SearchState<InputCut, Gallop> {
 public:
  static constexpr size_t kBisectFusedUpTo = 16;
  InputCut(const ReductionGraph& g, Candidate base, bool fused) : base_(std::make_shared<const Candidate>(std::move(base))) {
    units_ = std::make_shared<const std::vector<size_t>>(g.units_of(*base_));
    search = Gallop::doubling(units_->size() - 1);
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
  std::optional<Candidate> make(const ReductionGraph& g, size_t i) const {
    return g.with_units(*base_, std::vector<size_t>(units_->end() - static_cast<std::ptrdiff_t>(i + 1), units_->end()));
  }
  std::optional<Candidate> result() const override { return last_interesting; }

 private:
  std::shared_ptr<const Candidate> base_;
  std::shared_ptr<const std::vector<size_t>> units_;
};
}  // namespace

PassStatePtr start_input_cut(const ReductionGraph& g, const Candidate& best, const Facts& facts) {
  if (g.size_of(best) <= 1) return nullptr;
  return std::make_shared<InputCut>(g, best, facts.marking_outputs_hides_failure);
}

}  // namespace reduce::detail
