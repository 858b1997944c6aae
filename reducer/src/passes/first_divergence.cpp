// first-divergence: with intermediate values marked as outputs, bisect the topological order for
// the first node whose output already fails; keep that node and its ancestors.
#include "passes.h"

namespace reduce::detail {

namespace {
// The first p+1 units (a topological prefix is closed under ancestors) with all their outputs marked.
std::optional<Candidate> marked_prefix(Reduction& r, const Candidate& base, const std::vector<size_t>& units, size_t p) {
  auto c = r.with_units(base, std::vector<size_t>(units.begin(), units.begin() + p + 1));
  if (!c) return c;
  c->outputs.clear();
  for (size_t i = 0; i <= p; ++i)
    for (auto& o : r.node_outputs(units[i])) c->outputs.push_back(std::move(o));
  return c;
}
}  // namespace

void run_first_divergence(Reduction& r) {
  if (r.marking_outputs_hides_failure) return;
  const auto units = r.units();
  const size_t n = units.size();
  if (n <= 1) return;
  const Candidate base = r.best();
  // Marking outputs can break fusions the failure needs; then layerwise answers mean nothing.
  if (!r.test_one(*marked_prefix(r, base, units, n - 1))) {
    if (!r.stopped()) {
      r.marking_outputs_hides_failure = true;
      r.log("first-divergence: marking intermediate outputs hides the failure (fusion-dependent?); pass disabled");
    }
    return;
  }
  const size_t k = r.bisect_first(n - 1, [&](size_t p) { return marked_prefix(r, base, units, p); });
  if (r.stopped()) return;
  // The diverging node with its ancestors and only its own outputs; else the marked prefix.
  auto narrow = r.with_units(base, r.ancestors_within(base, units[k]));
  narrow->outputs = r.node_outputs(units[k]);
  if (narrow->nodes.size() < base.nodes.size() && r.test_one(*narrow)) {
    r.commit(std::move(*narrow));
  } else if (k + 1 < n) {
    r.commit(std::move(*marked_prefix(r, base, units, k)));
  }
}

}  // namespace reduce::detail
