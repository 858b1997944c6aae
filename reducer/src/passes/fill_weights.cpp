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
}  // namespace

void run_fill_weights(Reduction& r) {
  const Candidate& base = r.best();
  const Graph& g = r.graph();
  std::unordered_set<std::string_view> frozen(base.frozen.begin(), base.frozen.end()), seen;
  // Float initializers and frozen values of more than one element the kept nodes read, in
  // first-use order; edit 2k fills target k with 0, edit 2k+1 with 1.
  std::vector<std::string> targets;
  for (size_t n : r.units_of(base))
    for (const auto& v : g.nodes[n].inputs) {
      if (v.empty() || base.filled.count(v) || !seen.insert(v).second) continue;
      const Initializer* init = g.find_initializer(v);
      if (init ? init->tensor.elements() > 1 && fillable(init->tensor.dtype()) : frozen.count(v) && fillable(r.type_of(v)))
        targets.push_back(v);
    }
  if (targets.empty()) return;
  auto fill = [&](const Candidate& c, const std::vector<size_t>& chosen, double value) {
    Candidate out = c;
    for (size_t k : chosen) out.filled[targets[k]] = value;
    return std::optional<Candidate>(std::move(out));
  };
  // Zeros first (the simplest weights), then ones (zeros often silence the failure).
  for (double value : {0.0, 1.0})
    if (commit_independent_edits(r, targets.size(), [&](const Candidate& c, const std::vector<size_t>& chosen) {
          return fill(c, chosen, value);
        }))
      return;
}

}  // namespace reduce::detail
