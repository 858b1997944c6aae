// certify: one sweep removing each remaining node alone, top-level nodes and nodes inside kept
// bodies; when nothing goes, the result is 1-minimal over every unit.
#include "passes.h"

namespace reduce::detail {

PassStatePtr start_certify(const ReductionGraph& g, const Candidate& best, const Facts&) {
  const auto units = g.all_units_of(best);
  if (units.size() <= 1) return nullptr;
  std::vector<std::vector<size_t>> singles;
  for (size_t u : units) singles.push_back({u});
  return start_group_removal(g, best, std::move(singles));
}

}  // namespace reduce::detail
