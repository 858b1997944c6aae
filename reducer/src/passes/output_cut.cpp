// output-cut: keep only one node and what it depends on (a suffix cut on the DAG, not on a list).
#include "passes.h"

namespace reduce::detail {

// Sinks are tried by bisection on topological position: the earliest node whose ancestors
// still fail. Branchy graphs are not monotone in that order; node-removal handles what is left.
void run_output_cut(Reduction& r) {
  const auto units = r.units();
  if (units.size() <= 1 || r.single_sink == r.best()) return;
  const Candidate base = r.best();
  auto make = [&](size_t p) -> std::optional<Candidate> {
    auto kept = r.ancestors_within(base, units[p]);
    if (kept.size() == units.size()) return std::nullopt;  // not a reduction
    return r.with_units(base, std::move(kept));
  };
  // What follows a cut at p: the cut, then what input-cut and the passes after it test first.
  auto next = [&](size_t p) { return r.follow_ups(p < units.size() ? make(p) : std::nullopt); };
  const size_t p = r.bisect_first(units.size(), make, next);
  if (p < units.size())
    if (auto c = make(p)) r.commit(std::move(*c));
}

}  // namespace reduce::detail
