// RemovalPlan: a sequence of group removals whose next group may depend on the decisions so far
// (CDD rounds), so that speculation can look past the end of a round.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "../reduction.h"

namespace reduce::detail {

class RemovalPlan {
 public:
  virtual ~RemovalPlan() = default;
  // The next group to try against `current` (the candidate after every earlier decision), or
  // nullptr when the plan is done. Repeated calls without pop() return the same group.
  virtual const std::vector<size_t>* peek(const Reduction& r, const Candidate& current) = 0;
  virtual void pop() = 0;
  // An independent copy, for simulating the plan ahead under predicted answers.
  virtual std::unique_ptr<RemovalPlan> clone() const = 0;
};

// Runs the plan: each group is removed from the best candidate at that point and committed when
// the result is interesting. With several jobs, the next `jobs` removals are tested at once,
// built under predicted answers; only answers to exactly the sequential candidates are used, so
// the result does not depend on -j. Returns whether anything was committed.
bool run_removals(Reduction& r, RemovalPlan& plan);

// The units of `base` without those of `group`; nullopt when that removes nothing or everything.
std::optional<Candidate> without(const Reduction& r, const Candidate& base, const std::vector<size_t>& group);

}  // namespace reduce::detail
