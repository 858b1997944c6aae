// certify: one sweep removing each remaining node alone; when nothing goes, the result is 1-minimal.
#include "passes.h"

namespace reduce::detail {

void run_certify(Reduction& r) {
  const auto units = r.units();
  if (units.size() <= 1) return;
  std::vector<std::vector<size_t>> singles;
  for (size_t u : units) singles.push_back({u});
  remove_groups(r, singles);
}

}  // namespace reduce::detail
