// drop-attributes: remove node attributes (back to the operator's defaults) where the failure
// survives and the model stays valid (the reference recomputes the expected outputs).
#include "passes.h"

namespace reduce::detail {

void run_drop_attributes(Reduction& r) {
  const Candidate& base = r.best();
  std::vector<std::pair<size_t, std::string>> targets;
  for (size_t n : r.units_of(base))
    for (const auto& a : r.graph().nodes[n].attributes) {
      // Subgraphs are bodies, not settings; the reference refuses required attributes.
      if (a.kind == Attribute::Kind::Graph || a.kind == Attribute::Kind::Graphs) continue;
      std::pair<size_t, std::string> key{n, a.name};
      if (!std::binary_search(base.dropped_attributes.begin(), base.dropped_attributes.end(), key))
        targets.push_back(std::move(key));
    }
  commit_independent_edits(r, targets.size(), [&](const Candidate& c, const std::vector<size_t>& chosen) {
    Candidate out = c;
    for (size_t k : chosen) out.dropped_attributes.push_back(targets[k]);
    std::sort(out.dropped_attributes.begin(), out.dropped_attributes.end());
    return std::optional<Candidate>(std::move(out));
  });
}

}  // namespace reduce::detail
