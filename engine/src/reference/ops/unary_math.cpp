// Elementwise unary math: Relu, Neg, Abs, Sqrt, Exp, Sigmoid, Tanh.
#include <cmath>
#include <type_traits>

#include "../kernel.h"
#include "../numeric.h"

namespace reduce::ref {

namespace {

enum class Unary { Relu, Neg, Abs, Sqrt, Exp, Sigmoid, Tanh };

template <typename T>
T apply(Unary op, T x) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case Unary::Relu: return x > 0 ? x : T(0);
      case Unary::Neg: return -x;
      case Unary::Abs: return std::abs(x);
      case Unary::Sqrt: return std::sqrt(x);
      case Unary::Exp: return std::exp(x);
      case Unary::Sigmoid: return x >= 0 ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
      case Unary::Tanh: return std::tanh(x);
    }
  } else if constexpr (std::is_signed_v<T>) {
    switch (op) {
      case Unary::Relu: return x > 0 ? x : T(0);
      case Unary::Neg: return static_cast<T>(-x);
      case Unary::Abs: return static_cast<T>(x < 0 ? -x : x);
      default: break;
    }
  } else {
    switch (op) {
      case Unary::Relu:
      case Unary::Abs: return x;
      default: break;
    }
  }
  return x;
}

bool supports(Unary op, DType t) {
  if (dtype_is_float(t)) return true;
  if (t == DType::Bool) return false;
  const bool is_signed = t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64;
  if (op == Unary::Relu || op == Unary::Abs) return true;
  return op == Unary::Neg && is_signed;
}

class UnaryKernel : public Kernel {
 public:
  explicit UnaryKernel(Unary op) : op_(op) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (!supports(op_, x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), wx.shape()));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) {
        auto in = wx.data<T>();
        auto o = out.mutable_data<T>();
        for (size_t i = 0; i < in.size(); ++i) o[i] = apply<T>(op_, in[i]);
      }
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  Unary op_;
};

}  // namespace

Expected<KernelPtr> make_relu(const Node&, int64_t) { return KernelPtr(new UnaryKernel(Unary::Relu)); }
Expected<KernelPtr> make_neg(const Node&, int64_t) { return KernelPtr(new UnaryKernel(Unary::Neg)); }
Expected<KernelPtr> make_abs(const Node&, int64_t) { return KernelPtr(new UnaryKernel(Unary::Abs)); }
Expected<KernelPtr> make_sqrt(const Node&, int64_t) { return KernelPtr(new UnaryKernel(Unary::Sqrt)); }
Expected<KernelPtr> make_exp(const Node&, int64_t) { return KernelPtr(new UnaryKernel(Unary::Exp)); }
Expected<KernelPtr> make_sigmoid(const Node&, int64_t) { return KernelPtr(new UnaryKernel(Unary::Sigmoid)); }
Expected<KernelPtr> make_tanh(const Node&, int64_t) { return KernelPtr(new UnaryKernel(Unary::Tanh)); }

}  // namespace reduce::ref
