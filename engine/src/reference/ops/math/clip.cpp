// Clip: limits values to [min, max]; attributes before opset 11, optional scalar inputs since. When
// min > max every value becomes max (min(max(x, lo), hi)); NaN stays NaN.
#include <limits>
#include <optional>
#include <type_traits>

#include "reference/elementwise.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

// A scalar bound's value. A free function, not a member: clang 14 (the fuzz build) does not
// instantiate a member template called from a templated lambda in an earlier member.
template <typename T>
Expected<T> bound(const Tensor& b) {
  REDUCE_ASSIGN(Tensor w, widen(b));
  return w.data<T>()[0];
}

class ClipKernel : public Kernel {
 public:
  // lo/hi: the attribute bounds (opset < 11), or nullopt to read the optional inputs.
  ClipKernel(std::optional<float> lo, std::optional<float> hi, bool from_inputs)
      : lo_(lo), hi_(hi), from_inputs_(from_inputs) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (x.dtype() == DType::Bool || dtype_size(x.dtype()) == 0)
      return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    const Tensor* lo = from_inputs_ ? ctx.input(1) : nullptr;
    const Tensor* hi = from_inputs_ ? ctx.input(2) : nullptr;
    for (const Tensor* b : {lo, hi}) {
      if (!b) continue;
      if (b->dtype() != x.dtype())
        return make_error("bounds must have the input's type " + std::string(dtype_name(x.dtype())) + ", got " +
                          std::string(dtype_name(b->dtype())));
      if (b->elements() != 1) return make_error("bounds must be scalars, got shape " + shape_to_string(b->shape()));
    }
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate_uninitialized(wx.dtype(), wx.shape()));
    Status status = visit_dtype(wx.dtype(), [&]<typename T>() -> Status {
      if constexpr (std::is_same_v<T, bool>) {
        return make_error("bool inputs are not supported");
      } else {
        T low = std::numeric_limits<T>::lowest();
        T high = std::numeric_limits<T>::max();
        if (from_inputs_) {
          if (lo) {
            REDUCE_ASSIGN(low, bound<T>(*lo));
          }
          if (hi) {
            REDUCE_ASSIGN(high, bound<T>(*hi));
          }
        } else if constexpr (std::is_floating_point_v<T>) {
          if (lo_) low = static_cast<T>(*lo_);
          if (hi_) high = static_cast<T>(*hi_);
        }
        map_unary(wx.data<T>(), out.mutable_data<T>(), [low, high](T v) {
          const T r = v < low ? low : v;
          return r > high ? high : r;
        });
        return {};
      }
    });
    REDUCE_TRY(status);
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  std::optional<float> lo_, hi_;
  bool from_inputs_;
};

std::optional<float> float_attr(const Node& n, std::string_view name) {
  const Attribute* a = n.attribute(name);
  if (a && a->kind == Attribute::Kind::Float) return a->f;
  return std::nullopt;
}

}  // namespace

Expected<KernelPtr> make_clip(const Node& n, int64_t opset) {
  if (opset < 11) return KernelPtr(new ClipKernel(float_attr(n, "min"), float_attr(n, "max"), false));
  return KernelPtr(new ClipKernel(std::nullopt, std::nullopt, true));
}

}  // namespace reduce::ref
