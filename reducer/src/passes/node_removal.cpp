// node-removal: counter-based delta debugging over post-dominated branches, then topological bands.
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

#include "passes.h"

namespace reduce::detail {

namespace {

// CDD (Zhang et al., "Toward a Better Understanding of Probabilistic Delta Debugging"): ProbDD's
// probabilities reduce to a per-round subset size that shrinks by (1 - 1/e) each round; every
// subset is tried once per round, no complements, no revisits. We start at half the list (our
// failures usually need a handful of nodes out of thousands) and stop above `last_size`.
void counter_based_dd(Reduction& r, std::vector<std::vector<size_t>> elements, size_t last_size) {
  size_t size = (elements.size() + 1) / 2;
  while (!r.stopped() && elements.size() > 1 && size >= last_size) {
    std::vector<std::vector<size_t>> chunks;
    for (size_t i = 0; i < elements.size(); i += size) {
      std::vector<size_t> chunk;
      for (size_t j = i; j < std::min(elements.size(), i + size); ++j)
        chunk.insert(chunk.end(), elements[j].begin(), elements[j].end());
      chunks.push_back(std::move(chunk));
    }
    remove_groups(r, chunks);
    // Keep what is left of each element, in order.
    const auto left = r.units();
    const std::unordered_set<size_t> kept(left.begin(), left.end());
    std::vector<std::vector<size_t>> remaining;
    for (auto& e : elements) {
      std::vector<size_t> part;
      for (size_t u : e)
        if (kept.count(u)) part.push_back(u);
      if (!part.empty()) remaining.push_back(std::move(part));
    }
    elements = std::move(remaining);
    if (size == 1) break;
    size = std::min(size - 1, static_cast<size_t>(std::floor(static_cast<double>(size) * (1.0 - std::exp(-1.0)))));
    size = std::max<size_t>(size, 1);
  }
}

// Partitions units into branches: a branch is headed by a node that post-dominates it within the
// candidate and feeds a join (a node with several post-dominated inputs) or an output. Removing
// a branch removes a node together with everything that only serves it.
std::vector<std::vector<size_t>> branches(const Reduction& r, const std::vector<size_t>& units) {
  const auto& ix = r.index();
  const size_t none = std::numeric_limits<size_t>::max();  // the virtual sink after all outputs
  std::vector<bool> kept(r.graph().nodes.size(), false);
  for (size_t u : units) kept[u] = true;
  auto pos = [&](size_t n) { return n == none ? none : ix.topological_position(n); };
  std::vector<size_t> ipdom(kept.size(), none), children(kept.size(), 0);
  size_t sink_children = 0;
  for (auto it = units.rbegin(); it != units.rend(); ++it) {
    size_t d = none;
    bool first = true;
    for (size_t s : ix.successors(*it)) {
      if (!kept[s]) continue;
      if (first) { d = s; first = false; continue; }
      size_t a = d, b = s;
      while (a != b) {
        if (pos(a) < pos(b)) a = ipdom[a];
        else b = ipdom[b];
      }
      d = a;
    }
    if (first) d = none;  // no kept reader: feeds the outputs
    ipdom[*it] = d;
    if (d == none) ++sink_children;
    else ++children[d];
  }
  std::vector<size_t> head(kept.size(), none);
  std::vector<size_t> heads;
  for (auto it = units.rbegin(); it != units.rend(); ++it) {
    const size_t d = ipdom[*it];
    const bool is_head = d == none || children[d] > 1;
    head[*it] = is_head ? *it : head[d];
    if (is_head) heads.push_back(*it);
  }
  (void)sink_children;
  std::sort(heads.begin(), heads.end(), [&](size_t a, size_t b) { return pos(a) < pos(b); });
  std::vector<size_t> slot(kept.size(), none);
  std::vector<std::vector<size_t>> out(heads.size());
  for (size_t i = 0; i < heads.size(); ++i) slot[heads[i]] = i;
  for (size_t u : units) out[slot[head[u]]].push_back(u);
  return out;
}

}  // namespace

void run_node_removal(Reduction& r) {
  auto units = r.units();
  if (units.size() <= 1) return;
  auto groups = branches(r, units);
  const bool has_branches =
      groups.size() > 1 && std::any_of(groups.begin(), groups.end(), [](const auto& g) { return g.size() > 1; });
  if (has_branches) counter_based_dd(r, std::move(groups), 1);
  // Topological bands shrinking towards single nodes; the single-node round is certify's sweep
  // when that pass runs.
  const auto& passes = r.options().passes;
  const auto& skipped = r.options().skip_passes;
  const bool certify_runs = (passes.empty() || std::find(passes.begin(), passes.end(), "certify") != passes.end()) &&
                            std::find(skipped.begin(), skipped.end(), "certify") == skipped.end();
  std::vector<std::vector<size_t>> singles;
  for (size_t u : r.units()) singles.push_back({u});
  counter_based_dd(r, std::move(singles), certify_runs ? 2 : 1);
}

}  // namespace reduce::detail
