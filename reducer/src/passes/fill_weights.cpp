// fill-weights: replace float weights (and frozen values) by tensors holding one value, 0 or 1,
// where the failure survives: the reproducer then says the weights' values do not matter.
#include <unordered_set>

#include "passes.h"

namespace reduce::detail {

namespace {
bool fillable(DType d) { return d == DType::Float || d == DType::Double || d == DType::Float16 || d == DType::BFloat16; }
// ONNX element type numbers of float, float16, double, bfloat16.
bool fillable(const ValueType* type) {
  if (!type || !type->is_tensor()) return false;
  const int32_t e = type->elem_type;
  return e == 1 || e == 10 || e == 11 || e == 16;
}

// Filling each target with one value.
class Fills : public EditList {
 public:
  Fills(std::shared_ptr<const std::vector<std::string>> targets, double value) : targets_(std::move(targets)), value_(value) {}
  size_t count() const override { return targets_->size(); }
  std::optional<Candidate> apply(const Candidate& base, const std::vector<size_t>& chosen) const override {
    Candidate out = base;
    for (size_t k : chosen) out.filled[(*targets_)[k]] = value_;
    return out;
  }

 private:
  std::shared_ptr<const std::vector<std::string>> targets_;
  double value_;
};
}  // namespace

PassStatePtr start_fill_weights(const ReductionGraph& g, const Candidate& best, const Facts&) {
  const Graph& graph = g.graph();
  std::unordered_set<std::string_view> frozen(best.frozen.begin(), best.frozen.end()), seen;
  // Float initializers and frozen values of more than one element the kept nodes read, in
  // first-use order.
  auto targets = std::make_shared<std::vector<std::string>>();
  for (size_t n : g.units_of(best))
    for (const auto& v : graph.nodes[n].inputs) {
      if (v.empty() || best.filled.count(v) || !seen.insert(v).second) continue;
      const Initializer* init = graph.find_initializer(v);
      if (init ? init->tensor.elements() > 1 && fillable(init->tensor.dtype()) : frozen.count(v) && fillable(g.type_of(v)))
        targets->push_back(v);
    }
  if (targets->empty()) return nullptr;
  // Zeros first (the simplest weights), then ones (zeros often silence the failure).
  return start_independent_edits(g, best, {std::make_shared<const Fills>(targets, 0.0), std::make_shared<const Fills>(targets, 1.0)});
}

}  // namespace reduce::detail
