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

// All open cut values at once, else accumulated one by one in order while the failure survives.
void run_cut_as_constant(Reduction& r) {
  const Candidate& base = r.best();
  std::vector<std::string> open;
  for (auto& v : r.cut_values(base))
    if (!std::binary_search(base.frozen.begin(), base.frozen.end(), v)) open.push_back(std::move(v));
  commit_independent_edits(r, open.size(), [&](const Candidate& c, const std::vector<size_t>& chosen) {
    std::vector<std::string> values;
    for (size_t k : chosen) values.push_back(open[k]);
    return std::optional<Candidate>(freezing(c, values));
  });
}

}  // namespace reduce::detail
