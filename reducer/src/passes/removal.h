// Removal passes as state machines: a plan names the next group of units to remove from the
// current candidate; an interesting removal is committed and the plan goes on.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "passes.h"

namespace reduce::detail {

// Plan: a copyable value with `const std::vector<size_t>* peek(g, current)` (the next group to try
// against `current`, nullptr when done; may prepare the plan's next round) and `void pop()`.
template <typename Plan>
class RemovalState : public PassState {
 public:
  RemovalState(const ReductionGraph& g, Candidate current, Plan plan)
      : current_(std::make_shared<const Candidate>(std::move(current))), plan_(std::move(plan)) {
    settle(g);
  }

  const std::optional<Probe>& probe() const override { return probe_; }

  PassStatePtr advance(const ReductionGraph& g, const Answer& answer) const override {
    auto next = std::make_shared<RemovalState>(*this);
    next->plan_.pop();
    if (answer.interesting) next->current_ = std::make_shared<const Candidate>(probe_->candidate);
    next->settle(g);
    return next;
  }

 private:
  void settle(const ReductionGraph& g) {
    probe_.reset();
    while (const auto* group = plan_.peek(g, *current_)) {
      auto removed = g.removal_of(*current_, *group);
      if (auto c = g.without(*current_, removed)) {
        probe_ = Probe{std::move(*c), true, std::move(removed)};
        return;
      }
      plan_.pop();
    }
  }

  std::shared_ptr<const Candidate> current_;
  Plan plan_;
  std::optional<Probe> probe_;
};

}  // namespace reduce::detail
