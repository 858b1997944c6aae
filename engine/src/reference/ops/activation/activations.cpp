// Activations with attributes: Elu, Selu, Celu, LeakyRelu, HardSigmoid, HardSwish, Softplus, Softsign,
// ThresholdedRelu, Shrink, Mish, Gelu, Swish, and the gated SwiGLU. Computed in double and rounded once to
// the tensor's type.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "reference/elementwise.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

enum class Act { Elu, Selu, Celu, LeakyRelu, HardSigmoid, HardSwish, Softplus, Softsign, ThresholdedRelu, Shrink, Mish, GeluErf, GeluTanh, Swish };

struct Params {
  double alpha = 0, beta = 0, gamma = 0;
};

// x * sigmoid(alpha * x); exp overflowing to inf gives the right limit (-0).
double swish(double x, double alpha) { return x / (1 + std::exp(-alpha * x)); }

double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

template <typename T, typename F>
void run(std::span<const T> in, std::span<T> out, F f) {
  if constexpr (std::is_floating_point_v<T>) {
    map_unary(in, out, [f](T x) { return static_cast<T>(f(static_cast<double>(x))); });
  } else {
    map_unary(in, out, [f](T x) { return saturate_cast<T>(f(static_cast<double>(x))); });
  }
}

template <typename T>
void apply(Act op, const Params& p, std::span<const T> in, std::span<T> out) {
  const double a = p.alpha, b = p.beta, g = p.gamma;
  switch (op) {
    case Act::Elu: return run(in, out, [a](double x) { return x < 0 ? a * (std::exp(x) - 1) : x; });
    case Act::Selu: return run(in, out, [a, g](double x) { return x <= 0 ? g * (a * std::exp(x) - a) : g * x; });
    case Act::Celu:
      return run(in, out, [a](double x) { return std::max(0.0, x) + std::min(0.0, a * (std::exp(x / a) - 1)); });
    case Act::LeakyRelu: return run(in, out, [a](double x) { return x < 0 ? a * x : x; });
    case Act::HardSigmoid: return run(in, out, [a, b](double x) { return std::max(0.0, std::min(1.0, a * x + b)); });
    case Act::HardSwish:
      return run(in, out, [](double x) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); });
    case Act::Softplus: return run(in, out, [](double x) { return softplus(x); });
    case Act::Softsign: return run(in, out, [](double x) { return x / (1 + std::fabs(x)); });
    case Act::ThresholdedRelu: return run(in, out, [a](double x) { return x > a ? x : 0.0; });
    // alpha is lambd, beta is bias.
    case Act::Shrink: return run(in, out, [a, b](double x) { return x < -a ? x + b : x > a ? x - b : 0.0; });
    case Act::Mish: return run(in, out, [](double x) { return x * std::tanh(softplus(x)); });
    case Act::GeluErf: return run(in, out, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); });
    case Act::GeluTanh:
      return run(in, out, [](double x) {
        const double k = std::sqrt(2.0 / 3.14159265358979323846);
        return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
      });
    case Act::Swish: return run(in, out, [a](double x) { return swish(x, a); });
  }
}

class ActivationKernel : public Kernel {
 public:
  ActivationKernel(Act op, Params p) : op_(op), p_(p) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const bool integer_ok = op_ == Act::Shrink && !dtype_is_float(x.dtype()) && x.dtype() != DType::Bool &&
                            dtype_size(x.dtype()) > 0;
    if (!dtype_is_float(x.dtype()) && !integer_ok)
      return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate_uninitialized(wx.dtype(), wx.shape()));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) apply<T>(op_, p_, wx.data<T>(), out.mutable_data<T>());
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  Act op_;
  Params p_;
};

// SwiGLU(a, b) = Swish(a) * b, as one rounding; the spec requires identical shapes (no broadcasting).
class SwiGluKernel : public Kernel {
 public:
  explicit SwiGluKernel(double alpha) : alpha_(alpha) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    if (!dtype_is_float(a.dtype())) return make_error("unsupported input type " + std::string(dtype_name(a.dtype())));
    REDUCE_TRY(check_same_type(a, b));
    if (a.shape() != b.shape())
      return make_error("A " + shape_to_string(a.shape()) + " and B " + shape_to_string(b.shape()) + " must have the same shape");
    const Shape& shape = a.shape();
    REDUCE_ASSIGN(Tensor wa, widen(a));
    REDUCE_ASSIGN(Tensor wb, widen(b));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate_uninitialized(wa.dtype(), shape));
    const double alpha = alpha_;
    visit_dtype(wa.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>)
        map_binary(wa.data<T>(), a.shape(), wb.data<T>(), b.shape(), out.mutable_data<T>(), shape, [alpha](T x, T y) {
          return static_cast<T>(swish(static_cast<double>(x), alpha) * static_cast<double>(y));
        });
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, a.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  double alpha_;
};

KernelPtr activation(Act op, double alpha = 0, double beta = 0, double gamma = 0) {
  return KernelPtr(new ActivationKernel(op, Params{alpha, beta, gamma}));
}

}  // namespace

Expected<KernelPtr> make_elu(const Node& n, int64_t) { return activation(Act::Elu, attr_float(n, "alpha", 1.0f)); }
Expected<KernelPtr> make_selu(const Node& n, int64_t) {
  return activation(Act::Selu, attr_float(n, "alpha", 1.67326319217681884765625f), 0,
                    attr_float(n, "gamma", 1.05070102214813232421875f));
}
Expected<KernelPtr> make_celu(const Node& n, int64_t) {
  const float alpha = attr_float(n, "alpha", 1.0f);
  if (alpha == 0) return make_error("alpha must not be 0");
  return activation(Act::Celu, alpha);
}
Expected<KernelPtr> make_leaky_relu(const Node& n, int64_t) { return activation(Act::LeakyRelu, attr_float(n, "alpha", 0.01f)); }
Expected<KernelPtr> make_hard_sigmoid(const Node& n, int64_t) {
  return activation(Act::HardSigmoid, attr_float(n, "alpha", 0.2f), attr_float(n, "beta", 0.5f));
}
Expected<KernelPtr> make_hard_swish(const Node&, int64_t) { return activation(Act::HardSwish); }
Expected<KernelPtr> make_softplus(const Node&, int64_t) { return activation(Act::Softplus); }
Expected<KernelPtr> make_softsign(const Node&, int64_t) { return activation(Act::Softsign); }
Expected<KernelPtr> make_thresholded_relu(const Node& n, int64_t) {
  return activation(Act::ThresholdedRelu, attr_float(n, "alpha", 1.0f));
}
Expected<KernelPtr> make_shrink(const Node& n, int64_t) {
  return activation(Act::Shrink, attr_float(n, "lambd", 0.5f), attr_float(n, "bias", 0.0f));
}
Expected<KernelPtr> make_mish(const Node&, int64_t) { return activation(Act::Mish); }
Expected<KernelPtr> make_gelu(const Node& n, int64_t) {
  const std::string approximate = attr_string(n, "approximate", "none");
  if (approximate == "none") return activation(Act::GeluErf);
  if (approximate == "tanh") return activation(Act::GeluTanh);
  return make_error("approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
}
Expected<KernelPtr> make_swish(const Node& n, int64_t) { return activation(Act::Swish, attr_float(n, "alpha", 1.0f)); }
Expected<KernelPtr> make_swiglu(const Node& n, int64_t) {
  return KernelPtr(new SwiGluKernel(attr_float(n, "alpha", 1.0f)));
}

}  // namespace reduce::ref
