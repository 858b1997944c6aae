// shape-reduction: halve dims of the candidate's graph inputs (batch, sequence, spatial) while the
// failure survives; the oracle recomputes expected values for reduced shapes.
#include "passes.h"

namespace reduce::detail {

namespace {
// The shape fed for an input now: a reduced one, else its static declared/inferred shape.
std::optional<Shape> current_shape(Reduction& r, const Candidate& c, const std::string& input) {
  if (auto it = c.input_shapes.find(input); it != c.input_shapes.end()) return it->second;
  const ValueType* t = r.type_of(input);
  if (!t || !t->is_tensor() || !t->has_shape) return std::nullopt;
  Shape s;
  for (const Dim& d : t->dims) {
    if (!d.is_static()) return std::nullopt;
    s.push_back(d.value);
  }
  return s;
}

struct Halving {
  std::string input;
  int dim = -1;  // -1: every dim of the input
};
}  // namespace

// Tries, in order: every input's every dim halved, each input's dims halved, each single dim
// halved; the first that still fails is committed and the scan starts over.
void run_shape_reduction(Reduction& r) {
  for (int guard = 0; guard < 256 && !r.stopped(); ++guard) {
    const Candidate base = r.best();
    std::vector<std::pair<std::string, Shape>> inputs;
    for (const auto& v : r.graph_inputs(base)) {
      if (std::binary_search(base.frozen.begin(), base.frozen.end(), v)) continue;
      if (auto s = current_shape(r, base, v)) inputs.push_back({v, *s});
    }
    std::vector<std::vector<Halving>> options{{}};
    for (const auto& [name, shape] : inputs) {
      std::vector<Halving> all_dims;
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] > 1) all_dims.push_back({name, static_cast<int>(d)});
      if (all_dims.empty()) continue;
      options[0].insert(options[0].end(), all_dims.begin(), all_dims.end());
      if (all_dims.size() > 1) options.push_back(all_dims);
      for (const auto& h : all_dims) options.push_back({h});
    }
    if (options[0].empty()) return;
    if (options.size() == 2) options.erase(options.begin());  // one dim in all: same candidate twice
    auto make = [&](size_t i) -> std::optional<Candidate> {
      Candidate c = base;
      for (const auto& h : options[i]) {
        Shape s;
        for (const auto& [name, shape] : inputs)
          if (name == h.input) s = shape;
        auto [it, inserted] = c.input_shapes.emplace(h.input, s);
        it->second[h.dim] = (it->second[h.dim] + 1) / 2;
      }
      return c;
    };
    const auto k = r.first_interesting(options.size(), make);
    if (!k) return;
    r.commit(*make(*k));
  }
}

}  // namespace reduce::detail
