// The removal loop shared by node-removal and certify: first success in order wins, scan goes on.
#include <algorithm>
#include <unordered_set>

#include "passes.h"
#include "removal_plan.h"

namespace reduce::detail {

std::optional<Candidate> without(const Reduction& r, const Candidate& base, const std::vector<size_t>& group) {
  const std::unordered_set<size_t> drop(group.begin(), group.end());
  const auto units = r.units_of(base);
  std::vector<size_t> keep;
  for (size_t u : units)
    if (!drop.count(u)) keep.push_back(u);
  if (keep.size() == units.size()) return std::nullopt;
  return r.with_units(base, std::move(keep));
}

namespace {

// Guesses whether removing a group keeps the failure, from the answers seen so far (against any
// base). A group that contains one that could not be removed cannot be removed either (the
// usual monotone case). Otherwise each minimal failed group is assumed to hide one needed unit,
// uniformly among its units still kept: the group fails when it likely takes one of them.
class RemovalPredictor {
 public:
  void record(std::vector<size_t> group, bool interesting) {
    std::sort(group.begin(), group.end());
    if (interesting) return;
    for (const auto& f : failed_)
      if (std::includes(group.begin(), group.end(), f.begin(), f.end())) return;  // not minimal
    std::erase_if(failed_, [&](const auto& f) { return std::includes(f.begin(), f.end(), group.begin(), group.end()); });
    failed_.push_back(std::move(group));
  }

  bool predict_interesting(const Reduction& r, const Candidate& current, std::vector<size_t> group) const {
    std::sort(group.begin(), group.end());
    std::vector<bool> kept(r.graph().nodes.size(), false);
    for (size_t n : current.nodes) kept[n] = true;
    double survives = 1.0;  // probability that no needed unit is in the group
    for (const auto& f : failed_) {
      size_t live = 0, hit = 0;
      for (size_t u : f)
        if (kept[u]) {
          ++live;
          if (std::binary_search(group.begin(), group.end(), u)) ++hit;
        }
      if (live == 0) continue;
      if (hit == live) return false;
      survives *= 1.0 - static_cast<double>(hit) / static_cast<double>(live);
    }
    return survives >= 0.5;
  }

 private:
  std::vector<std::vector<size_t>> failed_;  // sorted; none contains another
};

}  // namespace

// Sequentially: each group is tried against the best candidate at that point and committed when
// interesting. In parallel, llvm-reduce's scheme (all in flight against the same base, the first
// success wins, later ones are redone) serializes on every success. Here a copy of the plan is
// run ahead for `jobs` removals under predicted answers (candidate j assumes the predicted
// commits before it, and the plan may enter its next round). The walk then follows the
// sequential order and takes only answers for exactly the candidates the sequence asks for, so
// the result never depends on -j; with -j 1 the window is the sequential candidate itself.
bool run_removals(Reduction& r, RemovalPlan& plan) {
  bool changed = false;
  RemovalPredictor predictor;
  while (!r.stopped()) {
    if (!plan.peek(r, r.best())) break;
    // The window: the next `jobs` candidates along the predicted path.
    std::vector<Candidate> window;
    std::vector<std::vector<size_t>> groups;
    {
      auto ahead = plan.clone();
      Candidate predicted = r.best();
      for (size_t guard = 0; window.size() < static_cast<size_t>(r.jobs()) && guard < 64 * static_cast<size_t>(r.jobs());
           ++guard) {
        const auto* g = ahead->peek(r, predicted);
        if (!g) break;
        auto c = without(r, predicted, *g);
        const auto group = *g;
        ahead->pop();
        if (!c) continue;
        const auto known = r.known_interesting(*c);
        const bool guess = known ? *known : predictor.predict_interesting(r, predicted, group);
        if (!known) {
          window.push_back(*c);
          groups.push_back(group);
        }
        if (guess) predicted = std::move(*c);
      }
    }
    const auto answers = r.all_interesting(window.size(), [&](size_t j) { return std::optional<Candidate>(window[j]); });
    for (size_t j = 0; j < window.size(); ++j) predictor.record(groups[j], answers[j]);
    // Walk in sequential order while the answer to the exact sequential candidate is known.
    while (!r.stopped()) {
      const auto* g = plan.peek(r, r.best());
      if (!g) break;
      const auto c = without(r, r.best(), *g);
      if (!c) { plan.pop(); continue; }
      const auto known = r.known_interesting(*c);
      if (!known) break;
      plan.pop();
      if (*known) {
        r.commit(*c);
        changed = true;
      }
    }
  }
  return changed;
}

namespace {
class FixedPlan : public RemovalPlan {
 public:
  explicit FixedPlan(const std::vector<std::vector<size_t>>& groups) : groups_(&groups) {}
  const std::vector<size_t>* peek(const Reduction&, const Candidate&) override {
    return next_ < groups_->size() ? &(*groups_)[next_] : nullptr;
  }
  void pop() override { ++next_; }
  std::unique_ptr<RemovalPlan> clone() const override { return std::make_unique<FixedPlan>(*this); }

 private:
  const std::vector<std::vector<size_t>>* groups_;
  size_t next_ = 0;
};
}  // namespace

bool remove_groups(Reduction& r, const std::vector<std::vector<size_t>>& groups) {
  FixedPlan plan(groups);
  return run_removals(r, plan);
}

}  // namespace reduce::detail
