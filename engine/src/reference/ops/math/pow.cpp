// Pow with broadcasting: the base's type is the output type; since opset 12 the exponent may have any
// numeric type. Float powers are computed in double and rounded once; integer powers are exact (wrapping).
#include <cmath>
#include <type_traits>

#include "reference/cast.h"
#include "reference/elementwise.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

// x^e for integers, by repeated squaring; negative exponents truncate 1/x^|e| toward zero (0 for x = 0).
template <typename T>
T integer_pow(T x, int64_t e) {
  if (e < 0) {
    if (x == T(1)) return T(1);
    if constexpr (std::is_signed_v<T>) {
      if (x == T(-1)) return (e % 2) ? T(-1) : T(1);
    }
    return T(0);
  }
  T result = 1;
  T base = x;
  for (uint64_t n = static_cast<uint64_t>(e); n; n >>= 1) {
    if (n & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
  }
  return result;
}

bool is_numeric(DType t) { return t != DType::Bool && dtype_size(t) > 0; }

class PowKernel : public Kernel {
 public:
  PowKernel(LegacyBroadcast legacy, bool mixed_types) : legacy_(legacy), mixed_types_(mixed_types) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    if (!is_numeric(a.dtype()) || !is_numeric(b.dtype()))
      return make_error("unsupported input types " + std::string(dtype_name(a.dtype())) + " and " +
                        std::string(dtype_name(b.dtype())));
    if (!mixed_types_ && a.dtype() != b.dtype())
      return make_error("base and exponent have different types (" + std::string(dtype_name(a.dtype())) + " and " +
                        std::string(dtype_name(b.dtype())) + "), allowed from opset 12");
    REDUCE_ASSIGN(BinaryShapes s, binary_shapes(a.shape(), b.shape(), legacy_));
    REDUCE_ASSIGN(Tensor wa, widen(a));
    const bool integer_exponent = !dtype_is_float(b.dtype());
    REDUCE_ASSIGN(Tensor e, cast_tensor(b, dtype_is_float(a.dtype()) || !integer_exponent ? DType::Double : DType::Int64));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wa.dtype(), s.out));
    visit_dtype(wa.dtype(), [&]<typename T>() {
      if constexpr (std::is_same_v<T, bool>) {
        return;
      } else if constexpr (std::is_floating_point_v<T>) {
        map_binary(wa.data<T>(), a.shape(), e.data<double>(), s.b, out.mutable_data<T>(), s.out,
                   [](T x, double y) { return static_cast<T>(std::pow(static_cast<double>(x), y)); });
      } else if (integer_exponent) {
        map_binary(wa.data<T>(), a.shape(), e.data<int64_t>(), s.b, out.mutable_data<T>(), s.out,
                   [](T x, int64_t y) { return integer_pow(x, y); });
      } else {
        map_binary(wa.data<T>(), a.shape(), e.data<double>(), s.b, out.mutable_data<T>(), s.out,
                   [](T x, double y) { return saturate_cast<T>(std::pow(static_cast<double>(x), y)); });
      }
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, a.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  LegacyBroadcast legacy_;
  bool mixed_types_;
};

}  // namespace

Expected<KernelPtr> make_pow(const Node& n, int64_t opset) {
  return KernelPtr(new PowKernel(legacy_broadcast(n, opset), opset >= 12));
}

}  // namespace reduce::ref
