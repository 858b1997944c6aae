// Max, Min, Sum, Mean of N inputs with multidirectional broadcasting, folded in input order. Sum and Mean
// accumulate in double and round once; Max and Min propagate NaN (as numpy's maximum and minimum).
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "reference/cast.h"
#include "reference/elementwise.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

enum class Fold { Max, Min, Sum, Mean };

template <typename T>
T fold_max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return a < b ? b : a;
}

template <typename T>
T fold_min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return b < a ? b : a;
}

class FoldKernel : public Kernel {
 public:
  explicit FoldKernel(Fold op) : op_(op) {}
  Status compute(KernelContext& ctx) const override {
    std::vector<Tensor> inputs;
    std::vector<Shape> shapes;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      const Tensor* t = ctx.input(i);
      if (!t) return make_error("input " + std::to_string(i) + " is missing");
      inputs.push_back(*t);
      shapes.push_back(t->shape());
    }
    if (inputs.empty()) return make_error("needs at least one input");
    const DType dtype = inputs[0].dtype();
    for (const Tensor& t : inputs)
      if (t.dtype() != dtype)
        return make_error("inputs have different types (" + std::string(dtype_name(dtype)) + " and " +
                          std::string(dtype_name(t.dtype())) + ")");
    const bool sum = op_ == Fold::Sum || op_ == Fold::Mean;
    if (!dtype_is_float(dtype) && (sum || dtype == DType::Bool || dtype_size(dtype) == 0))
      return make_error("unsupported input type " + std::string(dtype_name(dtype)));
    REDUCE_ASSIGN(Shape out_shape, broadcast_shapes(shapes));
    for (Tensor& t : inputs) {
      REDUCE_ASSIGN(t, widen(t));
    }
    if (sum) {
      REDUCE_ASSIGN(Tensor acc, Tensor::allocate(DType::Double, out_shape));
      for (const Tensor& t : inputs) {
        visit_dtype(t.dtype(), [&]<typename T>() {
          if constexpr (std::is_floating_point_v<T>) {
            // The accumulator is both an input and the output: each element reads and writes only itself.
            auto a = acc.mutable_data<double>();
            map_binary(std::span<const double>(a), out_shape, t.data<T>(), t.shape(), a, out_shape,
                       [](double s, T v) { return s + static_cast<double>(v); });
          }
        });
      }
      if (op_ == Fold::Mean) {
        const double n = static_cast<double>(inputs.size());
        auto a = acc.mutable_data<double>();
        map_unary(std::span<const double>(a), a, [n](double s) { return s / n; });
      }
      REDUCE_ASSIGN(Tensor result, cast_tensor(acc, dtype));
      ctx.set_output(0, std::move(result));
      return {};
    }
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(inputs[0].dtype(), out_shape));
    visit_dtype(out.dtype(), [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) {
        auto z = out.mutable_data<T>();
        const Tensor& first = inputs[0];
        map_binary(first.data<T>(), first.shape(), first.data<T>(), first.shape(), z, out_shape, [](T a, T) { return a; });
        for (size_t i = 1; i < inputs.size(); ++i) {
          const std::span<const T> acc(z);
          if (op_ == Fold::Max) map_binary(acc, out_shape, inputs[i].data<T>(), inputs[i].shape(), z, out_shape, fold_max<T>);
          else map_binary(acc, out_shape, inputs[i].data<T>(), inputs[i].shape(), z, out_shape, fold_min<T>);
        }
      }
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, dtype));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  Fold op_;
};

}  // namespace

Expected<KernelPtr> make_max(const Node&, int64_t) { return KernelPtr(new FoldKernel(Fold::Max)); }
Expected<KernelPtr> make_min(const Node&, int64_t) { return KernelPtr(new FoldKernel(Fold::Min)); }
Expected<KernelPtr> make_sum(const Node&, int64_t) { return KernelPtr(new FoldKernel(Fold::Sum)); }
Expected<KernelPtr> make_mean(const Node&, int64_t) { return KernelPtr(new FoldKernel(Fold::Mean)); }

}  // namespace reduce::ref
