// input-cut: drop a topological prefix; the values crossing its frontier become cut inputs.
#include "passes.h"

namespace reduce::detail {

namespace {
// Finds the longest removable prefix (removing less is assumed to keep failing). The search starts
// from the largest removals: after first-divergence the diverging node alone usually still fails.
// Candidate i removes the first n-1-i units: i = 0 keeps only the last unit.
class InputCut : public SearchState<InputCut, Gallop> {
 public:
  InputCut(const ReductionGraph& g, Candidate base) : base_(std::make_shared<const Candidate>(std::move(base))) {
    units_ = std::make_shared<const std::vector<size_t>>(g.units_of(*base_));
    search = Gallop::over(units_->size() - 1);
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

PassStatePtr start_input_cut(const ReductionGraph& g, const Candidate& best, const Facts&) {
  if (g.size_of(best) <= 1) return nullptr;
  return std::make_shared<InputCut>(g, best);
}

}  // namespace reduce::detail
