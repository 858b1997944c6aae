// ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare: axes as attribute or (newer opsets) input.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"
#include "reference/reduction_plan.h"

namespace reduce::ref {

namespace {

enum class ReduceOp { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

// Converts a double to an integer type the way a C cast would, without UB outside its range.
template <typename T>
T saturate_to(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

// One output of a floating-point reduction, accumulated in double.
template <typename T>
double reduce_float(ReduceOp op, const T* x, std::span<const size_t> offs) {
  const size_t n = offs.size();
  double acc = 0;
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
    case ReduceOp::LogSum:
      for (size_t r = 0; r < n; ++r) acc += static_cast<double>(x[offs[r]]);
      if (op == ReduceOp::Mean) return acc / static_cast<double>(n);  // empty: NaN (undefined by the spec)
      if (op == ReduceOp::LogSum) return std::log(acc);
      return acc;
    case ReduceOp::Max:
    case ReduceOp::Min: {
      const bool mx = op == ReduceOp::Max;
      acc = mx ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
      for (size_t r = 0; r < n; ++r) {
        const double v = static_cast<double>(x[offs[r]]);
        if (std::isnan(v)) return v;  // NaN propagates, as in numpy
        if (mx ? v > acc : v < acc) acc = v;
      }
      return acc;
    }
    case ReduceOp::Prod:
      acc = 1;
      for (size_t r = 0; r < n; ++r) acc *= static_cast<double>(x[offs[r]]);
      return acc;
    case ReduceOp::L1:
      for (size_t r = 0; r < n; ++r) acc += std::abs(static_cast<double>(x[offs[r]]));
      return acc;
    case ReduceOp::L2:
    case ReduceOp::SumSquare:
      for (size_t r = 0; r < n; ++r) {
        const double v = static_cast<double>(x[offs[r]]);
        acc += v * v;
      }
      return op == ReduceOp::L2 ? std::sqrt(acc) : acc;
    case ReduceOp::LogSumExp: {
      // Shift by the maximum so large inputs do not overflow exp().
      double m = -std::numeric_limits<double>::infinity();
      for (size_t r = 0; r < n; ++r) m = std::max(m, static_cast<double>(x[offs[r]]));
      if (std::isinf(m)) return m;  // empty (-inf), all -inf, or a +inf input
      for (size_t r = 0; r < n; ++r) acc += std::exp(static_cast<double>(x[offs[r]]) - m);
      return m + std::log(acc);
    }
  }
  return acc;
}

// One output of an integer reduction: sums and products wrap like the integer type, max/min are
// exact, and the reductions that need real arithmetic go through double.
template <typename T>
T reduce_integer(ReduceOp op, const T* x, std::span<const size_t> offs) {
  const size_t n = offs.size();
  using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  auto wrap_add = [](uint64_t a, uint64_t b) { return a + b; };
  uint64_t acc = 0;  // unsigned so overflow wraps without UB
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
      for (size_t r = 0; r < n; ++r) acc = wrap_add(acc, static_cast<uint64_t>(static_cast<Wide>(x[offs[r]])));
      if (op == ReduceOp::Mean)
        return n ? saturate_to<T>(static_cast<double>(static_cast<Wide>(acc)) / static_cast<double>(n)) : T(0);
      return static_cast<T>(acc);
    case ReduceOp::Max:
    case ReduceOp::Min: {
      const bool mx = op == ReduceOp::Max;
      T best = mx ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
      for (size_t r = 0; r < n; ++r) {
        const T v = x[offs[r]];
        if (mx ? v > best : v < best) best = v;
      }
      return best;
    }
    case ReduceOp::Prod:
      acc = 1;
      for (size_t r = 0; r < n; ++r) acc *= static_cast<uint64_t>(static_cast<Wide>(x[offs[r]]));
      return static_cast<T>(acc);
    case ReduceOp::L1:
      for (size_t r = 0; r < n; ++r) {
        const uint64_t v = static_cast<uint64_t>(static_cast<Wide>(x[offs[r]]));
        acc += std::is_signed_v<T> && x[offs[r]] < 0 ? uint64_t(0) - v : v;
      }
      return static_cast<T>(acc);
    case ReduceOp::SumSquare:
      for (size_t r = 0; r < n; ++r) {
        const uint64_t v = static_cast<uint64_t>(static_cast<Wide>(x[offs[r]]));
        acc += v * v;
      }
      return static_cast<T>(acc);
    default:
      return saturate_to<T>(reduce_float<T>(op, x, offs));
  }
}

class ReduceKernel : public Kernel {
 public:
  // axes_from_input: opsets where axes is the optional second input (ReduceSum 13+, the others 18+).
  ReduceKernel(ReduceOp op, std::vector<int64_t> axes, bool axes_from_input, bool keepdims, bool noop_with_empty_axes)
      : op_(op), axes_(std::move(axes)), axes_from_input_(axes_from_input), keepdims_(keepdims),
        noop_(noop_with_empty_axes) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    std::vector<int64_t> axes = axes_;
    if (axes_from_input_) {
      if (const Tensor* a = ctx.input(1)) {
        if (a->dtype() != DType::Int64) return make_error("axes must be int64");
        if (a->rank() > 1) return make_error("axes must be 1-D, got " + shape_to_string(a->shape()));
        auto v = a->data<int64_t>();
        axes.assign(v.begin(), v.end());
      }
    }
    if (axes.empty() && noop_) {
      ctx.set_output(0, x);
      return {};
    }
    std::vector<bool> reduced(x.rank(), axes.empty());
    for (int64_t a : axes) {
      REDUCE_ASSIGN(size_t d, normalize_axis(a, x.rank()));
      if (x.rank() == 0) continue;  // a scalar has nothing to reduce
      if (reduced[d]) return make_error("axis " + std::to_string(a) + " is repeated");
      reduced[d] = true;
    }
    const DType dtype = x.dtype();
    if (dtype == DType::Bool && op_ != ReduceOp::Max && op_ != ReduceOp::Min)
      return make_error("bool inputs are not supported");
    if (dtype_size(dtype) == 0 || dtype == DType::Complex64 || dtype == DType::Complex128)
      return make_error("unsupported input type " + std::string(dtype_name(dtype)));
    const ReductionPlan plan = make_reduction_plan(x.shape(), reduced, keepdims_);
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), plan.out_shape));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      const T* in = wx.data<T>().data();
      T* o = out.mutable_data<T>().data();
      const std::span<const size_t> offs(plan.offsets);
      const size_t grain = std::max<size_t>(1, 65536 / std::max<size_t>(1, offs.size()));
      parallel_for(plan.base.size(), grain, [&](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) {
          const T* xi = in + plan.base[i];
          if constexpr (std::is_same_v<T, bool>) {
            bool acc = op_ == ReduceOp::Min;  // identity of and/or
            for (size_t r = 0; r < offs.size(); ++r) acc = op_ == ReduceOp::Min ? (acc && xi[offs[r]]) : (acc || xi[offs[r]]);
            o[i] = acc;
          } else if constexpr (std::is_floating_point_v<T>) {
            o[i] = static_cast<T>(reduce_float<T>(op_, xi, offs));
          } else {
            o[i] = reduce_integer<T>(op_, xi, offs);
          }
        }
      });
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, dtype));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  ReduceOp op_;
  std::vector<int64_t> axes_;
  bool axes_from_input_;
  bool keepdims_;
  bool noop_;
};

Expected<KernelPtr> make_reduce(ReduceOp op, const Node& node, bool axes_from_input) {
  const Attribute* axes = node.attribute("axes");
  if (axes_from_input && axes) return make_error("axes is an input in this opset, not an attribute");
  const int64_t keepdims = attr_int(node, "keepdims", 1);
  const int64_t noop = attr_int(node, "noop_with_empty_axes", 0);
  if ((keepdims != 0 && keepdims != 1) || (noop != 0 && noop != 1))
    return make_error("keepdims and noop_with_empty_axes must be 0 or 1");
  return KernelPtr(new ReduceKernel(op, attr_ints(node, "axes"), axes_from_input, keepdims == 1, noop == 1));
}

// The opset from which axes moved from attribute to input: 13 for ReduceSum, 18 for the others.
Expected<KernelPtr> make_reduce_at(ReduceOp op, const Node& node, int64_t opset, int64_t axes_input_since) {
  return make_reduce(op, node, opset >= axes_input_since);
}

}  // namespace

Expected<KernelPtr> make_reduce_sum(const Node& n, int64_t v) { return make_reduce_at(ReduceOp::Sum, n, v, 13); }
Expected<KernelPtr> make_reduce_mean(const Node& n, int64_t v) { return make_reduce_at(ReduceOp::Mean, n, v, 18); }
Expected<KernelPtr> make_reduce_max(const Node& n, int64_t v) { return make_reduce_at(ReduceOp::Max, n, v, 18); }
Expected<KernelPtr> make_reduce_min(const Node& n, int64_t v) { return make_reduce_at(ReduceOp::Min, n, v, 18); }
Expected<KernelPtr> make_reduce_prod(const Node& n, int64_t v) { return make_reduce_at(ReduceOp::Prod, n, v, 18); }
Expected<KernelPtr> make_reduce_l1(const Node& n, int64_t v) { return make_reduce_at(ReduceOp::L1, n, v, 18); }
Expected<KernelPtr> make_reduce_l2(const Node& n, int64_t v) { return make_reduce_at(ReduceOp::L2, n, v, 18); }
Expected<KernelPtr> make_reduce_log_sum(const Node& n, int64_t v) { return make_reduce_at(ReduceOp::LogSum, n, v, 18); }
Expected<KernelPtr> make_reduce_log_sum_exp(const Node& n, int64_t v) {
  return make_reduce_at(ReduceOp::LogSumExp, n, v, 18);
}
Expected<KernelPtr> make_reduce_sum_square(const Node& n, int64_t v) {
  return make_reduce_at(ReduceOp::SumSquare, n, v, 18);
}

}  // namespace reduce::ref
