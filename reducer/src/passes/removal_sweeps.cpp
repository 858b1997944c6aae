// Single-unit removal sweeps (certify's): each unit alone against the candidate at that point,
// sweep after sweep until one removes nothing.
#include <utility>

#include "removal.h"

namespace reduce::detail {

namespace {
// A sweep tries every unit of the candidate it starts on. The units it tried after its last
// removal were tried against the candidate it ends on; those tried before it were not, and one
// may go now (a removal can leave another node's value unused, or a failure that is not monotone
// no longer need it), so another sweep goes over them alone. The last sweep removed nothing:
// every remaining unit was then tried alone against the final candidate, which is what 1-minimal
// means, without a whole round of the other passes to get there.
class SweepPlan {
 public:
  explicit SweepPlan(std::vector<size_t> units) : units_(std::make_shared<const std::vector<size_t>>(std::move(units))) {}
  const std::vector<size_t>* peek(const ReductionGraph& g, const Candidate& current) {
    // Only a removal changes `current` here: it drops top-level nodes or adds removed body nodes.
    const std::pair<size_t, size_t> size{current.nodes.size(), current.removed_body_nodes.size()};
    if (next_ > 0 && size != size_) last_removal_ = next_;  // the group before went
    size_ = size;
    if (next_ == units_->size()) {
      if (last_removal_ == 0) return nullptr;  // the sweep removed nothing
      const auto kept = g.kept_units(current);
      std::vector<size_t> again;
      for (size_t i = 0; i + 1 < last_removal_; ++i)
        if (kept[(*units_)[i]]) again.push_back((*units_)[i]);
      if (again.empty()) return nullptr;
      units_ = std::make_shared<const std::vector<size_t>>(std::move(again));
      next_ = 0;
      last_removal_ = 0;
    }
    group_ = {(*units_)[next_]};
    return &group_;
  }
  void pop() { ++next_; }

 private:
  std::shared_ptr<const std::vector<size_t>> units_;  // the units the sweep tries, in order
  size_t next_ = 0;                                   // the position tried next
  size_t last_removal_ = 0;                           // 1 + the position of the sweep's last removal, 0: none
  std::pair<size_t, size_t> size_{0, 0};              // the candidate's node counts at the last peek
  std::vector<size_t> group_;
};
}  // namespace

PassStatePtr start_removal_sweeps(const ReductionGraph& g, const Candidate& base) {
  auto units = g.all_units_of(base);
  if (units.size() <= 1) return nullptr;
  auto state = std::make_shared<RemovalState<SweepPlan>>(g, base, SweepPlan(std::move(units)));
  if (!state->probe()) return nullptr;
  return state;
}

}  // namespace reduce::detail
