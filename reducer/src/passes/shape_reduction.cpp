// shape-reduction: shrink dims of the candidate's graph inputs (batch, sequence, spatial) while the
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

// One dim of one graph input.
struct DimRef {
  std::string input;
  size_t dim = 0;
};

// The dims of `base`'s graph inputs (not frozen, statically shaped), in input then dim order.
std::vector<DimRef> dims_of(const ReductionGraph& g, const Candidate& base) {
  std::vector<DimRef> out;
  for (const auto& v : g.graph_inputs(base)) {
    if (std::binary_search(base.frozen.begin(), base.frozen.end(), v)) continue;
    if (auto shape = current_shape(g, base, v))
      for (size_t d = 0; d < shape->size(); ++d) out.push_back({v, d});
  }
  return out;
}

int64_t size_of(const ReductionGraph& g, const Candidate& c, const DimRef& r) {
  return current_shape(g, c, r.input)->at(r.dim);
}

// One dim of `c` as it will be fed, made explicit from `base`'s shape on first use.
int64_t& dim_of(const ReductionGraph& g, const Candidate& base, Candidate& c, const DimRef& r) {
  auto [it, inserted] = c.input_shapes.emplace(r.input, *current_shape(g, base, r.input));
  return it->second[r.dim];
}

// `base` with the dims `which` set to 1 (`to_one`) or halved (rounding up).
Candidate shrunk(const ReductionGraph& g, const Candidate& base, const std::vector<DimRef>& which, bool to_one) {
  Candidate c = base;
  for (const auto& r : which) {
    int64_t& d = dim_of(g, base, c, r);
    d = to_one ? 1 : (d + 1) / 2;
  }
  return c;
}

// `base` with one dim set to `value`.
Candidate resized(const ReductionGraph& g, const Candidate& base, const DimRef& r, int64_t value) {
  Candidate c = base;
  dim_of(g, base, c, r) = value;
  return c;
}

// `size` halved (rounding up) `k` times.
int64_t halved(int64_t size, size_t k) {
  for (size_t i = 0; i < k && size > 1; ++i) size = (size + 1) / 2;
  return size;
}

// Three stages, each committing what the failure survives: every dim at 1 at once (one check for
// the failures that do not depend on sizes, most of them); every dim above 1 halved at once, again
// and again; then each dim on its own: at 1 first (a spatial dim usually goes), else a bisection
// over its halvings for the smallest one the failure survives (log2 of log2 of the size, where
// halving step by step cost one engine run per halving kept). A dim is never tried again once
// its search ended: the failure needs the size it kept, and each re-try cost an engine run.
class ShapeReduction : public PassState {
 public:
  enum class Stage { AllToOne, AllHalved, EachDim, Done };

  ShapeReduction(const ReductionGraph& g, Candidate base) : base_(std::move(base)), dims_(dims_of(g, base_)) {
    settle(g);
  }

  const std::optional<Probe>& probe() const override { return probe_; }

  PassStatePtr advance(const ReductionGraph& g, const Answer& answer) const override {
    auto next = std::make_shared<ShapeReduction>(*this);
    if (answer.interesting) next->base_ = probe_->candidate;
    switch (stage_) {
      case Stage::AllToOne: next->stage_ = answer.interesting ? Stage::Done : Stage::AllHalved; break;
      case Stage::AllHalved:
        if (!answer.interesting) next->stage_ = Stage::EachDim;
        break;
      case Stage::EachDim:
        // Halvings below lo_ hold, from hi_ on they do not (1 is the last, tried first).
        if (answer.interesting) next->lo_ = probe_k_;
        else next->hi_ = probe_k_;
        break;
      case Stage::Done: break;
    }
    next->settle(g);
    return next;
  }

 private:
  // The dims still above 1.
  std::vector<DimRef> open(const ReductionGraph& g) const {
    std::vector<DimRef> out;
    for (const auto& r : dims_)
      if (size_of(g, base_, r) > 1) out.push_back(r);
    return out;
  }

  void settle(const ReductionGraph& g) {
    probe_.reset();
    const auto above_one = open(g);
    if (above_one.empty()) stage_ = Stage::Done;
    if (stage_ == Stage::AllToOne) {
      // Only when it differs from halving every dim (some dim above 2).
      const bool beyond_two = std::any_of(above_one.begin(), above_one.end(), [&](const DimRef& r) { return size_of(g, base_, r) > 2; });
      if (beyond_two) {
        probe_ = Probe{shrunk(g, base_, above_one, true), true, {}};
        return;
      }
      stage_ = Stage::AllHalved;
    }
    if (stage_ == Stage::AllHalved) {
      // With a single dim above 1 this is the same candidate as that dim's own first halving.
      if (above_one.size() > 1) {
        probe_ = Probe{shrunk(g, base_, above_one, false), true, {}};
        return;
      }
      stage_ = Stage::EachDim;
    }
    if (stage_ == Stage::EachDim) {
      while (dim_ < dims_.size()) {
        if (hi_ == 0) {  // a new dim: its halvings 1..steps, the last one reaching 1
          size_ = size_of(g, base_, dims_[dim_]);
          for (int64_t v = size_; v > 1; v = (v + 1) / 2) ++hi_;
          lo_ = 0;
          probe_k_ = hi_;  // straight to 1
          hi_ += 1;        // nothing refused yet
        } else {
          probe_k_ = lo_ + (hi_ - lo_) / 2;
        }
        if (hi_ > 1 && lo_ + 1 < hi_ && halved(size_, probe_k_) < size_of(g, base_, dims_[dim_])) {
          probe_ = Probe{resized(g, base_, dims_[dim_], halved(size_, probe_k_)), true, {}};
          return;
        }
        ++dim_;
        hi_ = 0;
      }
      stage_ = Stage::Done;
    }
  }

  Candidate base_;
  std::vector<DimRef> dims_;
  Stage stage_ = Stage::AllToOne;
  size_t dim_ = 0;  // EachDim: the dim being searched
  // EachDim: the dim's size when its search began, and the search over its halvings: lo_ halvings
  // hold, hi_ do not (0: the search has not begun), probe_k_ is asked now.
  int64_t size_ = 0;
  size_t lo_ = 0, hi_ = 0, probe_k_ = 0;
  std::optional<Probe> probe_;
};
}  // namespace

PassStatePtr start_shape_reduction(const ReductionGraph& g, const Candidate& best, const Facts&) {
  auto state = std::make_shared<ShapeReduction>(g, best);
  return state->probe() ? state : nullptr;
}

}  // namespace reduce::detail
