// Einsum: any equation (repeated labels/diagonals, ellipsis broadcasting, implicit output), sums in double.
#include <algorithm>
#include <cctype>
#include <map>
#include <type_traits>

#include "reference/broadcast.h"
#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

// One side of the equation: labels in order, with the ellipsis (if any) at `ellipsis`.
struct Term {
  std::string labels;
  int ellipsis = -1;  // position in labels where "..." stands, or -1
};

Expected<Term> parse_term(const std::string& s) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.') {
      if (t.ellipsis >= 0 || s.compare(i, 3, "...") != 0) return make_error("malformed ellipsis in '" + s + "'");
      t.ellipsis = static_cast<int>(t.labels.size());
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      t.labels += c;
    } else {
      return make_error(std::string("unexpected character '") + c + "' in the equation");
    }
  }
  return t;
}

struct Equation {
  std::vector<Term> inputs;
  Term output;
  bool explicit_output = false;
};

Expected<Equation> parse_equation(std::string eq) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  Equation e;
  const size_t arrow = eq.find("->");
  const std::string lhs = arrow == std::string::npos ? eq : eq.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    REDUCE_ASSIGN(Term t, parse_term(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    e.inputs.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    e.explicit_output = true;
    REDUCE_ASSIGN(e.output, parse_term(eq.substr(arrow + 2)));
  }
  return e;
}

// The iteration plan: a size per axis (output axes first, then summed axes), and for each input
// the element stride of every axis (repeated labels add up, which walks a diagonal).
struct Plan {
  Shape out_shape;
  std::vector<size_t> sizes;
  size_t out_axes = 0;
  std::vector<std::vector<size_t>> strides;
};

// Each input's ellipsis dims (empty without an ellipsis), after checking its rank against its term.
Expected<std::vector<Shape>> ellipsis_shapes(const Equation& e, const std::vector<const Tensor*>& in) {
  std::vector<Shape> ell_shapes;
  for (size_t i = 0; i < in.size(); ++i) {
    const Term& t = e.inputs[i];
    const size_t rank = in[i]->rank();
    if (rank < t.labels.size() || (t.ellipsis < 0 && rank != t.labels.size()))
      return make_error("input " + std::to_string(i) + " " + shape_to_string(in[i]->shape()) + " does not match its term");
    const size_t ne = rank - t.labels.size();
    const Shape& s = in[i]->shape();
    ell_shapes.emplace_back(s.begin() + std::max(t.ellipsis, 0), s.begin() + std::max(t.ellipsis, 0) + ne);
  }
  return ell_shapes;
}

// The size of every letter (equal wherever it appears) and how many times it appears.
struct Labels {
  std::map<char, int64_t> dim;
  std::map<char, int> count;
};

Expected<Labels> label_sizes(const Equation& e, const std::vector<const Tensor*>& in, const std::vector<Shape>& ell_shapes) {
  Labels l;
  for (size_t i = 0; i < in.size(); ++i) {
    const Term& t = e.inputs[i];
    const size_t ne = ell_shapes[i].size();
    for (size_t p = 0; p < t.labels.size(); ++p) {
      const size_t axis = p + (t.ellipsis >= 0 && static_cast<int>(p) >= t.ellipsis ? ne : 0);
      const int64_t d = in[i]->shape()[axis];
      auto [it, fresh] = l.dim.emplace(t.labels[p], d);
      if (!fresh && it->second != d)
        return make_error(std::string("label '") + t.labels[p] + "' has sizes " + std::to_string(it->second) +
                          " and " + std::to_string(d));
      ++l.count[t.labels[p]];
    }
  }
  return l;
}

// The output term: as written, or implicit (the ellipsis, then the letters seen once, sorted).
Expected<Term> output_term(const Equation& e, const Shape& ell, const Labels& l) {
  Term out = e.output;
  if (!e.explicit_output) {
    out = Term{};
    if (!ell.empty()) out.ellipsis = 0;
    for (auto [c, n] : l.count)
      if (n == 1) out.labels += c;
  } else if (out.ellipsis < 0 && !ell.empty()) {
    bool any = false;
    for (size_t d = 0; d < ell.size(); ++d) any = any || ell[d] != 1;
    if (any) return make_error("the output must keep the ellipsis dims");
  }
  for (char c : out.labels) {
    if (!l.dim.count(c)) return make_error(std::string("output label '") + c + "' is not in any input");
    if (std::count(out.labels.begin(), out.labels.end(), c) > 1)
      return make_error(std::string("output label '") + c + "' appears twice");
  }
  return out;
}

// Axis ids: -1-k for ellipsis dim k, the char code for letters; the output's axes come first.
constexpr int ellipsis_axis(size_t k) { return -1 - static_cast<int>(k); }

// An input's element stride along every plan axis: repeated letters add up (a diagonal), and an
// ellipsis dim of 1 broadcast to more keeps stride 0.
std::vector<size_t> input_strides(const Term& t, const Shape& s, size_t ne, const Shape& ell, const std::vector<int>& axes) {
  std::vector<size_t> elem_stride(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) elem_stride[d - 1] = elem_stride[d] * static_cast<size_t>(s[d]);
  std::vector<size_t> st(axes.size(), 0);
  const size_t e0 = static_cast<size_t>(std::max(t.ellipsis, 0));
  for (size_t axis = 0; axis < s.size(); ++axis) {
    int id;
    if (t.ellipsis >= 0 && axis >= e0 && axis < e0 + ne) {
      const size_t k = ell.size() - ne + (axis - e0);  // right-aligned broadcast
      if (s[axis] == 1 && ell[k] != 1) continue;       // broadcast: stride 0
      id = ellipsis_axis(k);
    } else {
      id = t.labels[axis < e0 || t.ellipsis < 0 ? axis : axis - ne];
    }
    const size_t a = static_cast<size_t>(std::find(axes.begin(), axes.end(), id) - axes.begin());
    st[a] += elem_stride[axis];
  }
  return st;
}

Expected<Plan> make_plan(const Equation& e, const std::vector<const Tensor*>& in) {
  if (e.inputs.size() != in.size())
    return make_error("the equation has " + std::to_string(e.inputs.size()) + " inputs, the node " +
                      std::to_string(in.size()));
  // Ellipsis dims: broadcast across inputs, right-aligned.
  REDUCE_ASSIGN(std::vector<Shape> ell_shapes, ellipsis_shapes(e, in));
  REDUCE_ASSIGN(Shape ell, broadcast_shapes(ell_shapes));
  REDUCE_ASSIGN(Labels labels, label_sizes(e, in, ell_shapes));
  REDUCE_ASSIGN(Term out, output_term(e, ell, labels));
  auto size_of = [&](int id) { return id < 0 ? ell[static_cast<size_t>(-1 - id)] : labels.dim[static_cast<char>(id)]; };
  std::vector<int> axes;
  Plan plan;
  for (size_t p = 0; p <= out.labels.size(); ++p) {
    if (out.ellipsis == static_cast<int>(p))
      for (size_t k = 0; k < ell.size(); ++k) axes.push_back(ellipsis_axis(k));
    if (p < out.labels.size()) axes.push_back(out.labels[p]);
  }
  plan.out_axes = axes.size();
  for (int id : axes) plan.out_shape.push_back(size_of(id));
  if (out.ellipsis < 0)
    for (size_t k = 0; k < ell.size(); ++k) axes.push_back(ellipsis_axis(k));  // summed (all size 1)
  for (auto [c, n] : labels.dim)
    if (out.labels.find(c) == std::string::npos) axes.push_back(c);
  for (int id : axes) plan.sizes.push_back(static_cast<size_t>(size_of(id)));
  for (size_t i = 0; i < in.size(); ++i)
    plan.strides.push_back(input_strides(e.inputs[i], in[i]->shape(), ell_shapes[i].size(), ell, axes));
  return plan;
}

template <typename T>
void run_plan(const Plan& p, const std::vector<const Tensor*>& in, Tensor& out) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
  const size_t n_in = in.size(), n_axes = p.sizes.size();
  size_t out_total = 1, sum_total = 1;
  for (size_t a = 0; a < p.out_axes; ++a) out_total *= p.sizes[a];
  for (size_t a = p.out_axes; a < n_axes; ++a) sum_total *= p.sizes[a];
  std::vector<const T*> data(n_in);
  for (size_t i = 0; i < n_in; ++i) data[i] = in[i]->data<T>().data();
  T* y = out.mutable_data<T>().data();
  parallel_for(out_total, std::max<size_t>(1, (size_t{1} << 14) / std::max<size_t>(1, sum_total * n_in)),
               [&](size_t begin, size_t end) {
                 std::vector<size_t> base(n_in), off(n_in), idx(n_axes);
                 for (size_t o = begin; o < end; ++o) {
                   std::fill(base.begin(), base.end(), 0);
                   size_t rest = o;
                   for (size_t a = p.out_axes; a-- > 0;) {
                     const size_t v = rest % p.sizes[a];
                     rest /= p.sizes[a];
                     for (size_t i = 0; i < n_in; ++i) base[i] += v * p.strides[i][a];
                   }
                   Acc acc = 0;
                   std::fill(idx.begin() + p.out_axes, idx.end(), 0);
                   off = base;
                   for (size_t s = 0; s < sum_total; ++s) {
                     Acc prod = 1;
                     for (size_t i = 0; i < n_in; ++i) {
                       if constexpr (std::is_floating_point_v<T>) prod *= static_cast<double>(data[i][off[i]]);
                       else prod *= static_cast<uint64_t>(static_cast<int64_t>(data[i][off[i]]));
                     }
                     acc += prod;
                     for (size_t a = n_axes; a-- > p.out_axes;) {  // next summed index
                       for (size_t i = 0; i < n_in; ++i) off[i] += p.strides[i][a];
                       if (++idx[a] < p.sizes[a]) break;
                       for (size_t i = 0; i < n_in; ++i) off[i] -= p.strides[i][a] * idx[a];
                       idx[a] = 0;
                     }
                   }
                   y[o] = static_cast<T>(acc);
                 }
               });
}

class EinsumKernel : public Kernel {
 public:
  explicit EinsumKernel(Equation e) : eq_(std::move(e)) {}

  Status compute(KernelContext& ctx) const override {
    if (ctx.input_count() == 0) return make_error("Einsum needs at least one input");
    const DType dtype = ctx.input(0)->dtype();
    std::vector<Tensor> widened;
    std::vector<const Tensor*> in;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      const Tensor* t = ctx.input(i);
      if (!t) return make_error("input " + std::to_string(i) + " is missing");
      if (t->dtype() != dtype) return make_error("all inputs must have the same type");
      REDUCE_ASSIGN(Tensor w, widen(*t));
      widened.push_back(std::move(w));
    }
    for (const Tensor& t : widened) in.push_back(&t);
    REDUCE_ASSIGN(Plan plan, make_plan(eq_, in));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(widened[0].dtype(), plan.out_shape));
    Status s = visit_dtype(widened[0].dtype(), [&]<typename T>() -> Status {
      if constexpr (std::is_same_v<T, bool>) return make_error("bool inputs are not supported");
      else run_plan<T>(plan, in, out);
      return {};
    });
    REDUCE_TRY(s);
    REDUCE_ASSIGN(Tensor result, narrow(out, dtype));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  Equation eq_;
};

}  // namespace

Expected<KernelPtr> make_einsum(const Node& node, int64_t) {
  const std::string eq = attr_string(node, "equation", "");
  if (eq.empty()) return make_error("attribute 'equation' is required");
  REDUCE_ASSIGN(Equation e, parse_equation(eq));
  return KernelPtr(new EinsumKernel(std::move(e)));
}

}  // namespace reduce::ref
