// The removal loop shared by node-removal and certify: first success in order wins, scan goes on.
#include <unordered_set>

#include "passes.h"

namespace reduce::detail {

bool remove_groups(Reduction& r, const std::vector<std::vector<size_t>>& groups) {
  bool changed = false;
  size_t i = 0;
  while (i < groups.size() && !r.stopped()) {
    const Candidate base = r.best();
    const std::vector<size_t> units = r.units();
    auto make = [&](size_t j) -> std::optional<Candidate> {
      const std::unordered_set<size_t> drop(groups[i + j].begin(), groups[i + j].end());
      std::vector<size_t> keep;
      for (size_t u : units)
        if (!drop.count(u)) keep.push_back(u);
      if (keep.size() == units.size()) return std::nullopt;  // the group is already gone
      return r.with_units(base, std::move(keep));
    };
    const auto k = r.first_interesting(groups.size() - i, make);
    if (!k) break;
    r.commit(*make(*k));
    changed = true;
    i += *k + 1;
  }
  return changed;
}

}  // namespace reduce::detail
