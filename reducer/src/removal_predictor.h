// RemovalPredictor: guesses whether removing a group of units keeps the failure, from the answers
// to other removals; the scheduler ranks speculative removal checks with it.
#pragma once

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "check_runner.h"
#include "reduction_graph.h"

namespace reduce::detail {

class RemovalPredictor {
 public:
  void record(std::vector<size_t> group, bool interesting) {
    std::sort(group.begin(), group.end());
    if (group.size() == 1) {
      ++singles_tried_;
      if (interesting) ++singles_removed_;
    }
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
  // `current`'s weights, attributes and shapes are read; one marking several outputs only when it
  // did not fail (first-divergence's prefixes): marked values show more error, not less, so the
  // unmarked part fails no more, unless marking breaks a fusion the failure needs, and then the
  // fully marked model passes and first-divergence tests no marked prefix. One that failed with
  // several outputs marked may fail only because a value is seen that the rest would hide.
  void learn_from_history(const ReductionGraph& g, const std::unordered_map<Candidate, Verdict>& verdicts,
                          const Candidate& current) {
    const auto units = g.units_of(current);
    std::vector<unsigned> in_other(g.graph().nodes.size(), 0);
    std::vector<bool> in_current(g.graph().nodes.size(), false);
    for (size_t u : units) in_current[u] = true;
    unsigned stamp = 0;
    std::vector<std::pair<std::vector<size_t>, bool>> groups;
    for (const auto& [c, verdict] : verdicts) {
      const TestOutcome outcome = verdict.outcome;
      if (outcome != TestOutcome::Interesting && outcome != TestOutcome::Uninteresting) continue;
      if ((c.outputs.size() > 1 && outcome == TestOutcome::Interesting) || c.filled != current.filled || c.dropped_attributes != current.dropped_attributes ||
          c.input_shapes != current.input_shapes || c.removed_body_nodes != current.removed_body_nodes)
        continue;
      ++stamp;
      for (size_t n : c.nodes) in_other[n] = stamp;
      std::vector<size_t> lacks;
      for (size_t u : units)
        if (in_other[u] != stamp) lacks.push_back(u);
      const bool interesting = outcome == TestOutcome::Interesting;
      // A failing candidate says something about `current` only when it is a part of it.
      if (lacks.empty() ||
          (interesting && !std::all_of(c.nodes.begin(), c.nodes.end(), [&](size_t n) { return !g.is_unit(n) || in_current[n]; })))
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

  double probability_interesting(const ReductionGraph& g, const Candidate& current, std::vector<size_t> group) const {
    std::sort(group.begin(), group.end());
    const std::vector<bool> kept = g.kept_units(current);  // body units included
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
    // How often single units went so far: (removed + 1) / (tried + 1), 1 before any answer. Where
    // the failed groups say nothing, a candidate the other passes already reduced (certify's, a
    // fused block) mostly keeps what it has: after its first refusals a single removal is guessed
    // to fail, and the slots go to the sweep's next units instead of to paths after a removal.
    const double singles = group.size() == 1 ? static_cast<double>(singles_removed_ + 1) / static_cast<double>(singles_tried_ + 1) : 1.0;
    return 0.05 + 0.9 * survives * singles;
  }

 private:
  std::vector<std::vector<size_t>> failed_;     // sorted; none contains another
  std::vector<std::vector<size_t>> removable_;  // sorted
  size_t singles_tried_ = 0, singles_removed_ = 0;  // answers to removals of one unit
};

}  // namespace reduce::detail
