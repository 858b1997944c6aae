// Mod with broadcasting: fmod = 1 gives C's fmod (sign of the dividend); fmod = 0 gives the remainder with
// the sign of the divisor (Python's %), for floats only from opset 28 (before, fmod must be 1 for them).
// Integer division by zero is an error; float division by zero is NaN.
#include <cmath>
#include <type_traits>

#include "reference/elementwise.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

template <typename T>
T truncated_mod(T x, T y) {
  if constexpr (std::is_signed_v<T>) {
    if (y == T(-1)) return T(0);  // min % -1 overflows in C++
  }
  return static_cast<T>(x % y);
}

template <typename T>
T floored_mod(T x, T y) {
  T r = truncated_mod(x, y);
  if constexpr (std::is_signed_v<T>) {
    if (r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
  }
  return r;
}

// Python's float %: a zero remainder takes the divisor's sign, a nonzero one of the other sign is moved
// by one divisor (so -3 % inf is inf). Half inputs are computed in float: float has more than twice their
// precision plus two bits, so rounding the float sum again to half gives the correctly rounded result.
template <typename T>
T floored_fmod(T x, T y) {
  const T r = std::fmod(x, y);
  if (y == T(0)) return r;
  if (r == T(0)) return std::copysign(T(0), y);
  return (r < 0) != (y < 0) ? r + y : r;
}

class ModKernel : public Kernel {
 public:
  ModKernel(bool fmod, bool floored_floats) : fmod_(fmod), floored_floats_(floored_floats) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    REDUCE_TRY(check_same_type(a, b));
    if (a.dtype() == DType::Bool || dtype_size(a.dtype()) == 0)
      return make_error("unsupported input type " + std::string(dtype_name(a.dtype())));
    if (dtype_is_float(a.dtype()) && !fmod_ && !floored_floats_)
      return make_error("fmod must be 1 for floating-point inputs before opset 28");
    const Shape shapes[] = {a.shape(), b.shape()};
    REDUCE_ASSIGN(Shape shape, broadcast_shapes(shapes));
    REDUCE_ASSIGN(Tensor wa, widen(a));
    REDUCE_ASSIGN(Tensor wb, widen(b));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wa.dtype(), shape));
    Status status = visit_dtype(wa.dtype(), [&]<typename T>() -> Status {
      auto x = wa.data<T>();
      auto y = wb.data<T>();
      auto z = out.mutable_data<T>();
      if constexpr (std::is_floating_point_v<T>) {
        if (fmod_) map_binary(x, a.shape(), y, b.shape(), z, shape, [](T p, T q) { return std::fmod(p, q); });
        else map_binary(x, a.shape(), y, b.shape(), z, shape, [](T p, T q) { return floored_fmod(p, q); });
      } else if constexpr (!std::is_same_v<T, bool>) {
        if (!all_nonzero(y)) return make_error("integer modulo by zero");
        if (fmod_) map_binary(x, a.shape(), y, b.shape(), z, shape, [](T p, T q) { return truncated_mod(p, q); });
        else map_binary(x, a.shape(), y, b.shape(), z, shape, [](T p, T q) { return floored_mod(p, q); });
      }
      return {};
    });
    REDUCE_TRY(status);
    REDUCE_ASSIGN(Tensor result, narrow(out, a.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  bool fmod_, floored_floats_;
};

}  // namespace

Expected<KernelPtr> make_mod(const Node& n, int64_t opset) {
  const int64_t fmod = attr_int(n, "fmod", 0);
  if (fmod != 0 && fmod != 1) return make_error("fmod must be 0 or 1, got " + std::to_string(fmod));
  return KernelPtr(new ModKernel(fmod == 1, opset >= 28));
}

}  // namespace reduce::ref
