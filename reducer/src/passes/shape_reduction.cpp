// shape-reduction: halve dims of the candidate's graph inputs (batch, sequence, spatial) while the
// failure survives; the oracle recomputes expected values for reduced shapes.
#include <algorithm>

#include "passes.h"

namespace reduce::detail {

namespace {
// The shape fed for an input now: a reduced one, else its static declared/inferred shape.
std::optional<Shape> current_shape(const ReductionGraph& g, const Candidate& c, const std::string& input) {
  if (auto it = c.input_shapes.find(input); it != c.input_shapes.end()) return it->second;
  const ValueType* t = g.type_of(input);
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
  int dim = -1;
  bool to_one = false;  // straight to 1 instead of halved
};

// One scan over the halvings of a base candidate, in order: every input's every dim halved, each
// input's dims halved, each single dim halved. The first that still fails is committed and a new
// scan starts from it (at most 256 scans). The first scan first tries every dim at 1: failures that
// do not depend on sizes (most) then cost one check instead of one per halving.
struct Scans {
  Candidate base;
  std::vector<std::pair<std::string, Shape>> inputs;
  std::vector<std::vector<Halving>> options;
  int scan = 0;
};

class ShapeReduction : public SearchState<ShapeReduction, Scan> {
 public:
  ShapeReduction(const ReductionGraph& g, std::shared_ptr<const Scans> scans) : scans_(std::move(scans)) {
    search = Scan::over(scans_->options.size());
    settle(g);
  }
  std::optional<Candidate> make(const ReductionGraph&, size_t i) const {
    Candidate c = scans_->base;
    for (const auto& h : scans_->options[i]) {
      Shape s;
      for (const auto& [name, shape] : scans_->inputs)
        if (name == h.input) s = shape;
      auto [it, inserted] = c.input_shapes.emplace(h.input, s);
      int64_t& d = it->second[static_cast<size_t>(h.dim)];
      d = h.to_one ? 1 : (d + 1) / 2;
    }
    return c;
  }
  bool commits() const { return true; }
  PassStatePtr advance(const ReductionGraph& g, const Answer& answer) const override {
    if (answer.interesting) return scan(g, probe()->candidate, scans_->scan + 1);
    return SearchState::advance(g, answer);
  }

  // The scan of `base` (nullptr: nothing to halve, or the last scan was done).
  static PassStatePtr scan(const ReductionGraph& g, const Candidate& base, int number) {
    if (number >= 256) return std::make_shared<Over>();
    auto s = std::make_shared<Scans>();
    s->base = base;
    s->scan = number;
    for (const auto& v : g.graph_inputs(base)) {
      if (std::binary_search(base.frozen.begin(), base.frozen.end(), v)) continue;
      if (auto shape = current_shape(g, base, v)) s->inputs.push_back({v, *shape});
    }
    s->options.emplace_back();
    for (const auto& [name, shape] : s->inputs) {
      std::vector<Halving> all_dims;
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] > 1) all_dims.push_back({name, static_cast<int>(d)});
      if (all_dims.empty()) continue;
      s->options[0].insert(s->options[0].end(), all_dims.begin(), all_dims.end());
      if (all_dims.size() > 1) s->options.push_back(all_dims);
      for (const auto& h : all_dims) s->options.push_back({h});
    }
    if (s->options[0].empty()) return std::make_shared<Over>();
    if (s->options.size() == 2) s->options.erase(s->options.begin());  // one dim in all: same candidate twice
    if (number == 0) {
      std::vector<Halving> all_to_one;
      bool beyond_two = false;  // else halving every dim is the same candidate
      for (const auto& [name, shape] : s->inputs)
        for (size_t d = 0; d < shape.size(); ++d)
          if (shape[d] > 1) {
            all_to_one.push_back({name, static_cast<int>(d), true});
            beyond_two |= shape[d] > 2;
          }
      if (beyond_two) s->options.insert(s->options.begin(), std::move(all_to_one));
    }
    return std::make_shared<ShapeReduction>(g, std::move(s));
  }

 private:
  // The pass after its last scan.
  class Over : public PassState {
   public:
    const std::optional<Probe>& probe() const override { return none_; }
    PassStatePtr advance(const ReductionGraph&, const Answer&) const override { return std::make_shared<Over>(); }

   private:
    std::optional<Probe> none_;
  };

  std::shared_ptr<const Scans> scans_;
};
}  // namespace

PassStatePtr start_shape_reduction(const ReductionGraph& g, const Candidate& best, const Facts&) {
  auto state = ShapeReduction::scan(g, best, 0);
  return state->probe() ? state : nullptr;
}

}  // namespace reduce::detail
