// cut-as-constant: feed cut values as initializers holding the recorded value instead of inputs
// (importers and fusions often need a weight or a shape to be constant).
#include <algorithm>

#include "passes.h"

namespace reduce::detail {

namespace {
Candidate freezing(const Candidate& base, const std::vector<std::string>& values) {
  Candidate c = base;
  for (const auto& v : values) {
    c.frozen.push_back(v);
    c.input_shapes.erase(v);
  }
  std::sort(c.frozen.begin(), c.frozen.end());
  c.frozen.erase(std::unique(c.frozen.begin(), c.frozen.end()), c.frozen.end());
  return c;
}
}  // namespace

// All open cut values at once, then each alone (first success in order, repeated).
void run_cut_as_constant(Reduction& r) {
  while (!r.stopped()) {
    const Candidate base = r.best();
    std::vector<std::string> open;
    for (auto& v : r.cut_values(base))
      if (!std::binary_search(base.frozen.begin(), base.frozen.end(), v)) open.push_back(std::move(v));
    if (open.empty()) return;
    auto make = [&](size_t i) -> std::optional<Candidate> {
      if (i == 0) return freezing(base, open);
      if (open.size() == 1) return std::nullopt;
      return freezing(base, {open[i - 1]});
    };
    const auto k = r.first_interesting(open.size() + 1, make);
    if (!k) return;
    r.commit(*make(*k));
    if (*k == 0) return;
  }
}

}  // namespace reduce::detail
