// Elementwise unary math: Relu, Neg, Abs, Sqrt, Exp, Log, Sigmoid, Tanh, trigonometric and hyperbolic
// functions, Ceil, Floor, Round, Reciprocal, Erf, Sign. Float results are computed in double and rounded
// once to the tensor's type, so they are as exact as the type allows.
#include <cmath>
#include <type_traits>

#include "reference/elementwise.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

enum class Unary {
  Relu, Neg, Abs, Sqrt, Exp, Log, Sigmoid, Tanh, Acos, Acosh, Asin, Asinh, Atan, Atanh, Cos, Cosh, Sin, Sinh,
  Tan, Ceil, Floor, Round, Reciprocal, Erf, Sign
};

template <typename T>
void run_float(Unary op, std::span<const T> in, std::span<T> out) {
  auto exact = [&](auto f) { map_unary(in, out, f); };
  auto in_double = [&](auto f) {
    map_unary(in, out, [f](T x) { return static_cast<T>(f(static_cast<double>(x))); });
  };
  switch (op) {
    // NaN stays NaN (x < 0 is false), as numpy's maximum(x, 0).
    case Unary::Relu: return exact([](T x) { return x < 0 ? T(0) : x; });
    case Unary::Neg: return exact([](T x) { return -x; });
    case Unary::Abs: return exact([](T x) { return std::fabs(x); });
    case Unary::Ceil: return exact([](T x) { return std::ceil(x); });
    case Unary::Floor: return exact([](T x) { return std::floor(x); });
    // Halves round to even under the default rounding mode.
    case Unary::Round: return exact([](T x) { return std::nearbyint(x); });
    case Unary::Sign: return exact([](T x) { return x > 0 ? T(1) : x < 0 ? T(-1) : x; });
    case Unary::Sqrt: return in_double([](double x) { return std::sqrt(x); });
    case Unary::Exp: return in_double([](double x) { return std::exp(x); });
    case Unary::Log: return in_double([](double x) { return std::log(x); });
    case Unary::Sigmoid:
      // Written so that exp never overflows.
      return in_double([](double x) { return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x)); });
    case Unary::Tanh: return in_double([](double x) { return std::tanh(x); });
    case Unary::Acos: return in_double([](double x) { return std::acos(x); });
    case Unary::Acosh: return in_double([](double x) { return std::acosh(x); });
    case Unary::Asin: return in_double([](double x) { return std::asin(x); });
    case Unary::Asinh: return in_double([](double x) { return std::asinh(x); });
    case Unary::Atan: return in_double([](double x) { return std::atan(x); });
    case Unary::Atanh: return in_double([](double x) { return std::atanh(x); });
    case Unary::Cos: return in_double([](double x) { return std::cos(x); });
    case Unary::Cosh: return in_double([](double x) { return std::cosh(x); });
    case Unary::Sin: return in_double([](double x) { return std::sin(x); });
    case Unary::Sinh: return in_double([](double x) { return std::sinh(x); });
    case Unary::Tan: return in_double([](double x) { return std::tan(x); });
    case Unary::Reciprocal: return in_double([](double x) { return 1.0 / x; });
    case Unary::Erf: return in_double([](double x) { return std::erf(x); });
  }
}

template <typename T>
void run_integer(Unary op, std::span<const T> in, std::span<T> out) {
  switch (op) {
    case Unary::Relu: return map_unary(in, out, [](T x) { return x < 0 ? T(0) : x; });
    case Unary::Neg: return map_unary(in, out, [](T x) { return wrap_sub(T(0), x); });
    case Unary::Abs: return map_unary(in, out, [](T x) { return x < 0 ? wrap_sub(T(0), x) : x; });
    case Unary::Sign: return map_unary(in, out, [](T x) { return static_cast<T>(x > 0 ? 1 : x < 0 ? -1 : 0); });
    // Erf of an integer is 0 or +-1 after truncation; kept general through a saturating conversion.
    case Unary::Erf:
      return map_unary(in, out, [](T x) { return saturate_cast<T>(std::erf(static_cast<double>(x))); });
    default: return;
  }
}

bool is_signed_int(DType t) { return t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64; }
bool is_unsigned_int(DType t) { return t == DType::UInt8 || t == DType::UInt16 || t == DType::UInt32 || t == DType::UInt64; }

bool supports(Unary op, DType t) {
  if (dtype_is_float(t)) return true;
  switch (op) {
    case Unary::Relu:
    case Unary::Neg: return is_signed_int(t);
    case Unary::Abs:
    case Unary::Sign:
    case Unary::Erf: return is_signed_int(t) || is_unsigned_int(t);
    default: return false;
  }
}

class UnaryKernel : public Kernel {
 public:
  explicit UnaryKernel(Unary op) : op_(op) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (!supports(op_, x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate_uninitialized(wx.dtype(), wx.shape()));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) run_float<T>(op_, wx.data<T>(), out.mutable_data<T>());
      else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        run_integer<T>(op_, wx.data<T>(), out.mutable_data<T>());
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  Unary op_;
};

KernelPtr unary(Unary op) { return KernelPtr(new UnaryKernel(op)); }

}  // namespace

Expected<KernelPtr> make_relu(const Node&, int64_t) { return unary(Unary::Relu); }
Expected<KernelPtr> make_neg(const Node&, int64_t) { return unary(Unary::Neg); }
Expected<KernelPtr> make_abs(const Node&, int64_t) { return unary(Unary::Abs); }
Expected<KernelPtr> make_sqrt(const Node&, int64_t) { return unary(Unary::Sqrt); }
Expected<KernelPtr> make_exp(const Node&, int64_t) { return unary(Unary::Exp); }
Expected<KernelPtr> make_log(const Node&, int64_t) { return unary(Unary::Log); }
Expected<KernelPtr> make_sigmoid(const Node&, int64_t) { return unary(Unary::Sigmoid); }
Expected<KernelPtr> make_tanh(const Node&, int64_t) { return unary(Unary::Tanh); }
Expected<KernelPtr> make_acos(const Node&, int64_t) { return unary(Unary::Acos); }
Expected<KernelPtr> make_acosh(const Node&, int64_t) { return unary(Unary::Acosh); }
Expected<KernelPtr> make_asin(const Node&, int64_t) { return unary(Unary::Asin); }
Expected<KernelPtr> make_asinh(const Node&, int64_t) { return unary(Unary::Asinh); }
Expected<KernelPtr> make_atan(const Node&, int64_t) { return unary(Unary::Atan); }
Expected<KernelPtr> make_atanh(const Node&, int64_t) { return unary(Unary::Atanh); }
Expected<KernelPtr> make_cos(const Node&, int64_t) { return unary(Unary::Cos); }
Expected<KernelPtr> make_cosh(const Node&, int64_t) { return unary(Unary::Cosh); }
Expected<KernelPtr> make_sin(const Node&, int64_t) { return unary(Unary::Sin); }
Expected<KernelPtr> make_sinh(const Node&, int64_t) { return unary(Unary::Sinh); }
Expected<KernelPtr> make_tan(const Node&, int64_t) { return unary(Unary::Tan); }
Expected<KernelPtr> make_ceil(const Node&, int64_t) { return unary(Unary::Ceil); }
Expected<KernelPtr> make_floor(const Node&, int64_t) { return unary(Unary::Floor); }
Expected<KernelPtr> make_round(const Node&, int64_t) { return unary(Unary::Round); }
Expected<KernelPtr> make_reciprocal(const Node&, int64_t) { return unary(Unary::Reciprocal); }
Expected<KernelPtr> make_erf(const Node&, int64_t) { return unary(Unary::Erf); }
Expected<KernelPtr> make_sign(const Node&, int64_t) { return unary(Unary::Sign); }

}  // namespace reduce::ref
