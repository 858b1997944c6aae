// input-cut: drop a topological prefix; the values crossing its frontier become cut inputs.
#include "passes.h"

namespace reduce::detail {

// Finds the longest removable prefix (removing less is assumed to keep failing). The search starts
// from the largest removals: after first-divergence the diverging node alone usually still fails.
void run_input_cut(Reduction& r) {
  const auto units = r.units();
  const size_t n = units.size();
  if (n <= 1) return;
  const Candidate base = r.best();
  // Candidate i removes the first n-1-i units: i = 0 keeps only the last unit.
  auto make = [&](size_t i) -> std::optional<Candidate> {
    return r.with_units(base, std::vector<size_t>(units.end() - static_cast<std::ptrdiff_t>(i + 1), units.end()));
  };
  const size_t i = r.gallop_first(n - 1, make, [&](size_t end) {
    return r.follow_ups(end < n - 1 ? make(end) : std::nullopt);
  });
  if (i < n - 1) r.commit(std::move(*make(i)));
}

}  // namespace reduce::detail
