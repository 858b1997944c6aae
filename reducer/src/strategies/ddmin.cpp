// ddmin: the classic delta debugging baseline (Zeller & Hildebrandt 2002), complements included.
#include <algorithm>

#include "strategies.h"

namespace reduce::detail {

bool run_ddmin(Reduction& r) {
  size_t n = 2;
  while (!r.stopped()) {
    const auto units = r.units();
    if (units.size() < 2) return true;
    n = std::min(n, units.size());
    std::vector<std::vector<size_t>> parts(n);
    for (size_t i = 0; i < units.size(); ++i) parts[i * n / units.size()].push_back(units[i]);
    const Candidate base = r.best();
    // Candidates 0..n-1 keep one part; n..2n-1 keep all but one (skipped for n = 2: the same sets).
    const size_t count = n == 2 ? n : 2 * n;
    auto make = [&](size_t i) -> std::optional<Candidate> {
      if (i < n) return r.with_units(base, parts[i]);
      std::vector<size_t> keep;
      for (size_t j = 0; j < n; ++j)
        if (j != i - n) keep.insert(keep.end(), parts[j].begin(), parts[j].end());
      return r.with_units(base, std::move(keep));
    };
    const auto k = r.first_interesting(count, make);
    if (r.stopped()) return false;
    if (k) {
      r.commit(*make(*k));
      n = *k < n ? 2 : std::max<size_t>(n - 1, 2);
    } else if (n < units.size()) {
      n = std::min(units.size(), 2 * n);
    } else {
      return true;
    }
  }
  return false;
}

}  // namespace reduce::detail
