// polygraphy-bisect / polygraphy-linear: Polygraphy's `debug reduce` reimplemented on candidates.
#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "strategies.h"

namespace reduce::detail {

namespace {

// Polygraphy's markers: bisect keeps a good/bad pair of node indices; linear walks every index.
// Both remember the failing index with the fewest nodes.
struct Marker {
  size_t index = 0;
  long good = 0, bad = 0;
};

// Polygraphy's bisect step; its "success" is a passing check, i.e. a candidate not interesting.
Marker step(const Marker& m, bool interesting) {
  Marker next = m;
  if (!interesting) next.good = static_cast<long>(m.index);
  else next.bad = static_cast<long>(m.index);
  const double mid = (next.good + next.bad) / 2.0;
  next.index = static_cast<size_t>(!interesting ? std::ceil(mid) : std::floor(mid));
  return next;
}

// Runs one phase over `count` node positions; make(i) is the candidate for position i and
// size(i) its node count. Returns the chosen failing position, if any failed.
std::optional<size_t> search(Reduction& r, size_t count, bool bisect, bool invert, const CandidateMaker& make,
                             const std::function<size_t(size_t)>& size) {
  std::optional<size_t> best;
  auto consider = [&](size_t i) {  // Polygraphy: fewest nodes, later iterations win ties
    if (!best || size(i) <= size(*best)) best = i;
  };
  if (!bisect) {
    // Linear: from the last node down (outputs), or from the first up (inputs).
    auto order = [&](size_t k) { return invert ? k : count - 1 - k; };
    const auto answers = r.all_interesting(count, [&](size_t k) { return make(order(k)); });
    for (size_t k = 0; k < count && !r.stopped(); ++k)
      if (answers[k]) consider(order(k));
    return best;
  }
  Marker start;
  start.index = count / 2;
  start.good = invert ? static_cast<long>(count) : 0;
  start.bad = invert ? 0 : static_cast<long>(count);
  r.decide<Marker>(
      start,
      [&](const Marker& m) -> std::optional<size_t> {
        if (std::labs(m.good - m.bad) <= 1 || m.index >= count) return std::nullopt;
        return m.index;
      },
      step, make,
      [&](size_t i, bool interesting) {
        if (interesting) consider(i);
      });
  return best;
}

}  // namespace

void run_polygraphy_outputs(Reduction& r, bool bisect) {
  const auto units = r.units();
  if (units.empty()) return;
  const Candidate base = r.best();
  auto make = [&](size_t i) -> std::optional<Candidate> {
    auto c = r.with_units(base, r.ancestors_within(base, units[i]));
    c->outputs = r.node_outputs(units[i]);
    return c;
  };
  auto size = [&](size_t i) { return r.ancestors_within(base, units[i]).size(); };
  if (const auto i = search(r, units.size(), bisect, false, make, size)) r.commit(*make(*i));
}

void run_polygraphy_inputs(Reduction& r, bool bisect) {
  const auto units = r.units();
  if (units.empty()) return;
  const Candidate base = r.best();
  const auto& g = r.graph();
  const auto sinks = r.outputs_of(base);
  // Inputs marked at node i: keep what reaches an output without reading one of node i's inputs.
  auto kept_units = [&](size_t i) {
    const std::unordered_set<std::string> cut(g.nodes[units[i]].inputs.begin(), g.nodes[units[i]].inputs.end());
    std::vector<bool> in_base(g.nodes.size(), false), seen(g.nodes.size(), false);
    for (size_t n : base.nodes) in_base[n] = true;
    std::vector<size_t> stack, out;
    for (const auto& o : sinks)
      if (auto p = r.index().producer(o); p && in_base[*p] && !cut.count(o) && !seen[*p]) {
        seen[*p] = true;
        stack.push_back(*p);
      }
    while (!stack.empty()) {
      const size_t n = stack.back();
      stack.pop_back();
      if (r.is_unit(n)) out.push_back(n);
      auto visit = [&](const std::string& v) {
        if (v.empty() || cut.count(v)) return;
        if (auto p = r.index().producer(v); p && in_base[*p] && !seen[*p]) {
          seen[*p] = true;
          stack.push_back(*p);
        }
      };
      for (const auto& v : g.nodes[n].inputs) visit(v);
      for (const auto& v : g.nodes[n].implicit_inputs) visit(v);
    }
    return out;
  };
  auto make = [&](size_t i) -> std::optional<Candidate> {
    auto c = r.with_units(base, kept_units(i));
    if (!c) return c;
    // Polygraphy freezes every dangling value that is not one of the new graph inputs.
    const std::unordered_set<std::string> inputs(g.nodes[units[i]].inputs.begin(), g.nodes[units[i]].inputs.end());
    c->frozen.clear();
    for (auto& v : r.cut_values(*c))
      if (!inputs.count(v)) c->frozen.push_back(std::move(v));
    std::sort(c->frozen.begin(), c->frozen.end());
    return c;
  };
  auto size = [&](size_t i) { return kept_units(i).size(); };
  if (const auto i = search(r, units.size(), bisect, true, make, size)) r.commit(*make(*i));
}

}  // namespace reduce::detail
