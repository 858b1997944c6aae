// Group removal in a fixed order (certify's sweep): each group against the candidate at that point.
#include "removal.h"

namespace reduce::detail {

namespace {
class FixedPlan {
 public:
  explicit FixedPlan(std::vector<std::vector<size_t>> groups)
      : groups_(std::make_shared<const std::vector<std::vector<size_t>>>(std::move(groups))) {}
  const std::vector<size_t>* peek(const ReductionGraph&, const Candidate&) const {
    return next_ < groups_->size() ? &(*groups_)[next_] : nullptr;
  }
  void pop() { ++next_; }

 private:
  std::shared_ptr<const std::vector<std::vector<size_t>>> groups_;
  size_t next_ = 0;
};
}  // namespace

PassStatePtr start_group_removal(const ReductionGraph& g, const Candidate& base, std::vector<std::vector<size_t>> groups) {
  auto state = std::make_shared<RemovalState<FixedPlan>>(g, base, FixedPlan(std::move(groups)));
  if (!state->probe()) return nullptr;
  return state;
}

}  // namespace reduce::detail
