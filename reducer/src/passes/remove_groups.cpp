// The removal loop shared by node-removal and certify: first success in order wins, scan goes on.
#include <algorithm>
#include <queue>
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
    if (interesting) {
      removable_.push_back(std::move(group));
      return;
    }
    for (const auto& f : failed_)
      if (std::includes(group.begin(), group.end(), f.begin(), f.end())) return;  // not minimal
    std::erase_if(failed_, [&](const auto& f) { return std::includes(f.begin(), f.end(), group.begin(), group.end()); });
    failed_.push_back(std::move(group));
  }

  // Learns from every verdict so far (other passes' too), read as removals from `current`: a
  // candidate that did not fail says that removing what it lacks of `current` loses the failure
  // (assuming monotone failures: a subset of it fails no more); one that failed and is a part of
  // `current` says the rest is removable. Input-cut's and output-cut's searches thus tell
  // which boundary nodes are needed before node-removal tries any chunk. Only candidates with
  // `current`'s weights, attributes and shapes, marking at most one output (marking many can
  // hide a fused failure) are read.
  void learn_from_history(const Reduction& r, const Candidate& current) {
    const auto units = r.units_of(current);
    std::vector<unsigned> in_other(r.graph().nodes.size(), 0);
    std::vector<bool> in_current(r.graph().nodes.size(), false);
    for (size_t u : units) in_current[u] = true;
    unsigned stamp = 0;
    std::vector<std::pair<std::vector<size_t>, bool>> groups;
    for (const auto& [c, outcome] : r.verdicts()) {
      if (outcome != TestOutcome::Interesting && outcome != TestOutcome::Uninteresting) continue;
      if (c.outputs.size() > 1 || c.filled != current.filled || c.dropped_attributes != current.dropped_attributes ||
          c.input_shapes != current.input_shapes)
        continue;
      ++stamp;
      for (size_t n : c.nodes) in_other[n] = stamp;
      std::vector<size_t> lacks;
      for (size_t u : units)
        if (in_other[u] != stamp) lacks.push_back(u);
      const bool interesting = outcome == TestOutcome::Interesting;
      // A failing candidate says something about `current` only when it is a part of it.
      if (lacks.empty() ||
          (interesting && !std::all_of(c.nodes.begin(), c.nodes.end(), [&](size_t n) { return !r.is_unit(n) || in_current[n]; })))
        continue;
      groups.emplace_back(std::move(lacks), interesting);
    }
    // Smallest first: minimal failed groups are found before their supersets (cheap to reject),
    // and the result does not depend on the memo's order.
    std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
      return a.first.size() != b.first.size() ? a.first.size() < b.first.size() : a < b;
    });
    for (auto& [group, interesting] : groups) record(std::move(group), interesting);
  }

  double probability_interesting(const Reduction& r, const Candidate& current, std::vector<size_t> group) const {
    std::sort(group.begin(), group.end());
    std::vector<bool> kept(r.graph().nodes.size(), false);
    for (size_t n : current.nodes) kept[n] = true;
    // Removable against a larger base: most likely removable here too.
    for (const auto& g : removable_)
      if (std::all_of(group.begin(), group.end(), [&](size_t u) { return !kept[u] || std::binary_search(g.begin(), g.end(), u); }))
        return 0.95;
    double survives = 1.0;  // probability that no needed unit is in the group
    for (const auto& f : failed_) {
      size_t live = 0, hit = 0;
      for (size_t u : f)
        if (kept[u]) {
          ++live;
          if (std::binary_search(group.begin(), group.end(), u)) ++hit;
        }
      if (live == 0) continue;
      if (hit == live) return 0.02;  // not 0: non-monotone failures exist
      survives *= 1.0 - static_cast<double>(hit) / static_cast<double>(live);
    }
    return 0.05 + 0.9 * survives;
  }

 private:
  std::vector<std::vector<size_t>> failed_;     // sorted; none contains another
  std::vector<std::vector<size_t>> removable_;  // sorted
};

}  // namespace

// A speculative path through the plan: the plan's position, the candidate it leads to, and how
// likely the answers it assumed are.
struct Speculation {
  double probability = 1.0;
  size_t order = 0;  // tie-break: earlier expansions first
  std::unique_ptr<RemovalPlan> plan;
  Candidate predicted;
};

struct LessLikely {
  bool operator()(const Speculation& a, const Speculation& b) const {
    return a.probability != b.probability ? a.probability < b.probability : a.order > b.order;
  }
};

// Sequentially: each group is tried against the best candidate at that point and committed when
// interesting. In parallel, llvm-reduce's scheme (all in flight against the same base, the first
// success wins, later ones are redone) serializes on every success. Here copies of the plan are
// run ahead under predicted answers, best first: the `jobs` candidates most likely to be asked
// for next, branching on both answers where the prediction is unsure (and into the plan's next
// round). The walk then follows the sequential order and takes only answers for exactly the
// candidates the sequence asks for, so the result never depends on -j; with -j 1 the window is
// the sequential candidate itself.
bool run_removals(Reduction& r, RemovalPlan& plan) {
  bool changed = false;
  RemovalPredictor predictor;
  const size_t slots = static_cast<size_t>(r.jobs());
  if (slots > 1) predictor.learn_from_history(r, r.best());
  // Alternatives tested in the background: the predictor learns their answers once known.
  std::vector<std::pair<std::vector<size_t>, Candidate>> pending;
  while (!r.stopped()) {
    std::erase_if(pending, [&](const auto& p) {
      const auto known = r.known_interesting(p.second);
      if (known) predictor.record(p.first, *known);
      return known.has_value();
    });
    if (!plan.peek(r, r.best())) break;
    std::vector<Candidate> window;
    std::vector<std::vector<size_t>> groups;
    size_t greedy_count = 0;  // the window's first entries: the most likely path
    std::unordered_set<Candidate> in_window;
    std::priority_queue<Speculation, std::vector<Speculation>, LessLikely> frontier;
    size_t order = 0;
    // Half the slots follow the single most likely path (so that every group of the round gets
    // an answer, even against a slightly wrong base: the predictor learns from it); the other
    // half goes to the most likely alternatives.
    std::optional<Speculation> greedy = Speculation{1.0, order++, plan.clone(), r.best()};
    for (size_t steps = 0; window.size() < slots && steps < 64 * slots; ++steps) {
      const bool on_greedy = greedy && window.size() < (slots + 1) / 2;
      if (!on_greedy && greedy) {
        frontier.push(std::move(*greedy));
        greedy.reset();
      }
      if (!on_greedy && frontier.empty()) break;
      Speculation s;
      if (on_greedy) {
        s = std::move(*greedy);
        greedy.reset();
      } else {
        s = std::move(const_cast<Speculation&>(frontier.top()));
        frontier.pop();
      }
      // Follow known answers to the next candidate nobody has tested.
      std::optional<Candidate> c;
      std::vector<size_t> group;
      while (const auto* g = s.plan->peek(r, s.predicted)) {
        group = *g;
        s.plan->pop();
        c = without(r, s.predicted, group);
        if (!c) continue;
        const auto known = r.known_interesting(*c);
        if (!known) break;
        if (*known) s.predicted = std::move(*c);
        c.reset();
      }
      if (!c) continue;  // the plan ends on this path (the greedy one too)
      if (in_window.insert(*c).second) {
        window.push_back(*c);
        groups.push_back(group);
        if (on_greedy) greedy_count = window.size();
      }
      const double p = predictor.probability_interesting(r, s.predicted, group);
      Speculation yes{s.probability * p, order++, s.plan->clone(), *c};
      Speculation no{s.probability * (1 - p), order++, std::move(s.plan), std::move(s.predicted)};
      if (on_greedy) {
        greedy = std::move(p >= 0.5 ? yes : no);
        frontier.push(std::move(p >= 0.5 ? no : yes));
      } else {
        frontier.push(std::move(yes));
        frontier.push(std::move(no));
      }
    }
    // The likely path is waited for; the alternatives only take free slots (a prefetched
    // confirmation of the next passes may hold the others) and nobody waits for them.
    r.speculate(std::vector<Candidate>(window.begin() + greedy_count, window.end()));
    for (size_t j = greedy_count; j < window.size(); ++j) pending.emplace_back(groups[j], window[j]);
    const auto answers = r.all_interesting(greedy_count, [&](size_t j) { return std::optional<Candidate>(window[j]); });
    for (size_t j = 0; j < greedy_count; ++j) predictor.record(groups[j], answers[j]);
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
