// cut-as-constant: feed cut values as initializers holding the recorded value instead of inputs
// (importers and fusions often need a weight or a shape to be constant).
#include <algorithm>

#include "passes.h"

namespace reduce::detail {

namespace {
// Freezing each open cut value.
class Freezes : public EditList {
 public:
  explicit Freezes(std::vector<std::string> open) : open_(std::move(open)) {}
  size_t count() const override { return open_.size(); }
  std::optional<Candidate> apply(const Candidate& base, const std::vector<size_t>& chosen) const override {
    Candidate c = base;
    for (size_t k : chosen) {
      c.frozen.push_back(open_[k]);
      c.input_shapes.erase(open_[k]);
    }
    std::sort(c.frozen.begin(), c.frozen.end());
    c.frozen.erase(std::unique(c.frozen.begin(), c.frozen.end()), c.frozen.end());
    return c;
  }

 private:
  std::vector<std::string> open_;
};
}  // namespace

// All open cut values at once, else accumulated one by one in order while the failure survives.
PassStatePtr start_cut_as_constant(const ReductionGraph& g, const Candidate& best, const Facts&) {
  std::vector<std::string> open;
  for (auto& v : g.cut_values(best))
    if (!std::binary_search(best.frozen.begin(), best.frozen.end(), v)) open.push_back(std::move(v));
  if (open.empty()) return nullptr;
  return start_independent_edits(g, best, {std::make_shared<const Freezes>(std::move(open))});
}

}  // namespace reduce::detail
