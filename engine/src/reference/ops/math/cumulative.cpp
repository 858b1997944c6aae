// CumSum and CumProd: running sums or products along an axis (optionally exclusive and/or reversed);
// floats accumulate in double and round once per output, integers wrap.
#include <type_traits>

#include "reference/int_input.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

enum class Running { Sum, Product };

class CumulativeKernel : public Kernel {
 public:
  CumulativeKernel(Running op, bool exclusive, bool reverse) : op_(op), exclusive_(exclusive), reverse_(reverse) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    REDUCE_ASSIGN(int64_t axis_value, int_scalar(*ctx.input(1), "axis"));
    if (in.rank() == 0) return make_error("needs an input of rank 1 or more");
    REDUCE_ASSIGN(size_t axis, normalize_axis(axis_value, in.rank()));
    REDUCE_ASSIGN(Tensor wide, widen(in));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wide.dtype(), in.shape()));
    size_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(in.shape()[d]);
    for (size_t d = axis + 1; d < in.rank(); ++d) inner *= static_cast<size_t>(in.shape()[d]);
    const size_t n = static_cast<size_t>(in.shape()[axis]);
    Status s = visit_dtype(wide.dtype(), [&]<typename T>() -> Status {
      if constexpr (std::is_same_v<T, bool>) {
        return make_error("bool inputs are not supported");
      } else {
        if (wide.dtype() == DType::Complex64 || wide.dtype() == DType::Complex128)
          return make_error("unsupported type " + std::string(dtype_name(wide.dtype())));
        // double for floats; 64-bit unsigned for integers, whose wrap-around (of sums and of products)
        // equals T's modulo 2^bits.
        using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
        auto x = wide.data<T>();
        auto y = out.mutable_data<T>();
        auto combine = [this](Acc a, Acc b) { return op_ == Running::Sum ? Acc(a + b) : Acc(a * b); };
        for (size_t o = 0; o < outer; ++o)
          for (size_t i = 0; i < inner; ++i) {
            Acc acc = op_ == Running::Sum ? Acc(0) : Acc(1);
            for (size_t step = 0; step < n; ++step) {
              const size_t j = reverse_ ? n - 1 - step : step;
              const size_t at = (o * n + j) * inner + i;
              if (exclusive_) {
                y[at] = static_cast<T>(acc);
                acc = combine(acc, static_cast<Acc>(x[at]));
              } else {
                acc = combine(acc, static_cast<Acc>(x[at]));
                y[at] = static_cast<T>(acc);
              }
            }
          }
        return {};
      }
    });
    REDUCE_TRY(s);
    REDUCE_ASSIGN(Tensor result, narrow(out, in.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  Running op_;
  bool exclusive_, reverse_;
};

Expected<KernelPtr> make_cumulative(Running op, const Node& node) {
  return KernelPtr(new CumulativeKernel(op, attr_int(node, "exclusive", 0) != 0, attr_int(node, "reverse", 0) != 0));
}

}  // namespace

Expected<KernelPtr> make_cum_sum(const Node& node, int64_t) { return make_cumulative(Running::Sum, node); }
Expected<KernelPtr> make_cum_prod(const Node& node, int64_t) { return make_cumulative(Running::Product, node); }

}  // namespace reduce::ref
