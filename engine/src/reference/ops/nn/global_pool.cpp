// GlobalAveragePool, GlobalMaxPool and GlobalLpPool: one value per (N, C) plane, parallel over planes.
#include <cmath>
#include <limits>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

enum class GlobalKind { Average, Max, Lp };

class GlobalPoolKernel : public Kernel {
 public:
  GlobalPoolKernel(GlobalKind kind, double p) : kind_(kind), p_(p) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (!dtype_is_float(x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    if (x.rank() < 2) return make_error("input must have at least 2 dims (N, C), got " + shape_to_string(x.shape()));
    Shape out_shape = x.shape();
    size_t plane = 1;
    for (size_t d = 2; d < out_shape.size(); ++d) {
      plane *= static_cast<size_t>(out_shape[d]);
      out_shape[d] = 1;
    }
    const size_t planes = static_cast<size_t>(x.shape()[0] * x.shape()[1]);
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate_uninitialized(wx.dtype(), out_shape));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        const T* in = wx.data<T>().data();
        T* o = out.mutable_data<T>().data();
        parallel_for(planes, std::max<size_t>(1, 65536 / std::max<size_t>(plane, 1)), [&](size_t b, size_t e) {
          for (size_t i = b; i < e; ++i) o[i] = reduce_plane<T>(in + i * plane, plane);
        });
      }
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  template <typename T>
  T reduce_plane(const T* src, size_t n) const {
    switch (kind_) {
      case GlobalKind::Average: {
        double sum = 0;
        for (size_t i = 0; i < n; ++i) sum += static_cast<double>(src[i]);
        return static_cast<T>(sum / static_cast<double>(n));
      }
      case GlobalKind::Max: {
        T best = -std::numeric_limits<T>::infinity();
        for (size_t i = 0; i < n; ++i) {
          if (src[i] != src[i]) return src[i];  // NaN propagates
          if (src[i] > best) best = src[i];
        }
        return best;
      }
      case GlobalKind::Lp: {
        double sum = 0;
        for (size_t i = 0; i < n; ++i) sum += std::pow(std::abs(static_cast<double>(src[i])), p_);
        return static_cast<T>(std::pow(sum, 1.0 / p_));
      }
    }
    return T(0);
  }

  GlobalKind kind_;
  double p_;
};

}  // namespace

Expected<KernelPtr> make_global_average_pool(const Node&, int64_t) {
  return KernelPtr(new GlobalPoolKernel(GlobalKind::Average, 0));
}
Expected<KernelPtr> make_global_max_pool(const Node&, int64_t) { return KernelPtr(new GlobalPoolKernel(GlobalKind::Max, 0)); }

// GlobalLpPool: `p` was a float in opset 1 and an int since opset 2.
Expected<KernelPtr> make_global_lp_pool(const Node& node, int64_t) {
  const Attribute* pa = node.attribute("p");
  double p = 2;
  if (pa) p = pa->kind == Attribute::Kind::Float ? pa->f : static_cast<double>(pa->i);
  if (!(p > 0) || !std::isfinite(p)) return make_error("p must be positive");
  return KernelPtr(new GlobalPoolKernel(GlobalKind::Lp, p));
}

}  // namespace reduce::ref
