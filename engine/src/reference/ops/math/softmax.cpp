// Softmax, LogSoftmax, Hardmax: before opset 13 over the input coerced to 2-D at axis, since 13 over one axis.
#include <cmath>
#include <limits>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

enum class SoftmaxOp { Softmax, LogSoftmax, Hardmax };

// Computes one row of n elements spaced `stride` apart, in double.
template <typename T>
void softmax_row(SoftmaxOp op, const T* x, T* y, size_t n, size_t stride) {
  double m = -std::numeric_limits<double>::infinity();
  size_t arg = 0;
  for (size_t k = 0; k < n; ++k) {
    const double v = static_cast<double>(x[k * stride]);
    if (v > m) {
      m = v;
      arg = k;
    }
  }
  if (op == SoftmaxOp::Hardmax) {
    for (size_t k = 0; k < n; ++k) y[k * stride] = static_cast<T>(k == arg ? 1 : 0);
    return;
  }
  double sum = 0;
  for (size_t k = 0; k < n; ++k) sum += std::exp(static_cast<double>(x[k * stride]) - m);
  if (op == SoftmaxOp::Softmax) {
    for (size_t k = 0; k < n; ++k) y[k * stride] = static_cast<T>(std::exp(static_cast<double>(x[k * stride]) - m) / sum);
  } else {
    const double log_sum = std::log(sum);
    for (size_t k = 0; k < n; ++k) y[k * stride] = static_cast<T>(static_cast<double>(x[k * stride]) - m - log_sum);
  }
}

class SoftmaxKernel : public Kernel {
 public:
  SoftmaxKernel(SoftmaxOp op, int64_t axis, bool coerce_2d) : op_(op), axis_(axis), coerce_2d_(coerce_2d) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (!dtype_is_float(x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    const Shape& s = x.shape();
    size_t outer = 1, n = 1, inner = 1;
    if (!s.empty()) {
      // Old opsets also accept axis == rank (everything in the outer part).
      if (coerce_2d_ && axis_ == static_cast<int64_t>(s.size())) {
        for (int64_t d : s) outer *= static_cast<size_t>(d);
      } else {
        REDUCE_ASSIGN(size_t axis, normalize_axis(axis_, s.size()));
        for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(s[d]);
        if (coerce_2d_) {
          for (size_t d = axis; d < s.size(); ++d) n *= static_cast<size_t>(s[d]);
        } else {
          n = static_cast<size_t>(s[axis]);
          for (size_t d = axis + 1; d < s.size(); ++d) inner *= static_cast<size_t>(s[d]);
        }
      }
    }
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), wx.shape()));
    Status status;
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const T* in = wx.data<T>().data();
        T* o = out.mutable_data<T>().data();
        if (n == 0) return;
        parallel_for(outer * inner, std::max<size_t>(1, 32768 / n), [&](size_t b, size_t e) {
          for (size_t i = b; i < e; ++i) {
            const size_t off = (i / inner) * n * inner + (i % inner);
            softmax_row<T>(op_, in + off, o + off, n, inner);
          }
        });
      }
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  SoftmaxOp op_;
  int64_t axis_;
  bool coerce_2d_;
};

Expected<KernelPtr> make_softmax_family(SoftmaxOp op, const Node& node, int64_t opset) {
  const bool coerce = opset < 13;
  return KernelPtr(new SoftmaxKernel(op, attr_int(node, "axis", coerce ? 1 : -1), coerce));
}

}  // namespace

Expected<KernelPtr> make_softmax(const Node& n, int64_t v) { return make_softmax_family(SoftmaxOp::Softmax, n, v); }
Expected<KernelPtr> make_log_softmax(const Node& n, int64_t v) { return make_softmax_family(SoftmaxOp::LogSoftmax, n, v); }
Expected<KernelPtr> make_hardmax(const Node& n, int64_t v) { return make_softmax_family(SoftmaxOp::Hardmax, n, v); }

}  // namespace reduce::ref
