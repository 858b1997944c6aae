// drop-attributes: remove node attributes (back to the operator's defaults) where the failure
// survives and the model stays valid (the reference recomputes the expected outputs).
#include <algorithm>

#include "passes.h"

namespace reduce::detail {

namespace {
class Drops : public EditList {
 public:
  explicit Drops(std::vector<std::pair<size_t, std::string>> targets) : targets_(std::move(targets)) {}
  size_t count() const override { return targets_.size(); }
  std::optional<Candidate> apply(const Candidate& base, const std::vector<size_t>& chosen) const override {
    Candidate out = base;
    for (size_t k : chosen) out.dropped_attributes.push_back(targets_[k]);
    std::sort(out.dropped_attributes.begin(), out.dropped_attributes.end());
    return out;
  }

 private:
  std::vector<std::pair<size_t, std::string>> targets_;
};
}  // namespace

PassStatePtr start_drop_attributes(const ReductionGraph& g, const Candidate& best, const Facts&) {
  std::vector<std::pair<size_t, std::string>> targets;
  for (size_t n : g.units_of(best))
    for (const auto& a : g.graph().nodes[n].attributes) {
      // Subgraphs are bodies, not settings; the reference refuses required attributes.
      if (a.kind == Attribute::Kind::Graph || a.kind == Attribute::Kind::Graphs) continue;
      std::pair<size_t, std::string> key{n, a.name};
      if (!std::binary_search(best.dropped_attributes.begin(), best.dropped_attributes.end(), key))
        targets.push_back(std::move(key));
    }
  if (targets.empty()) return nullptr;
  return start_independent_edits(g, best, {std::make_shared<const Drops>(std::move(targets))});
}

}  // namespace reduce::detail
