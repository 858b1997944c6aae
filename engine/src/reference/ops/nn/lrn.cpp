// LRN: local response normalization across channels, x / (bias + alpha/size * sum of squares)^beta.
#include <cmath>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

class LrnKernel : public Kernel {
 public:
  LrnKernel(double alpha, double beta, double bias, int64_t size) : alpha_(alpha), beta_(beta), bias_(bias), size_(size) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (!dtype_is_float(x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    if (x.rank() < 2) return make_error("input must have rank at least 2");
    const size_t batch = static_cast<size_t>(x.shape()[0]);
    const int64_t channels = x.shape()[1];
    size_t spatial = 1;
    for (size_t d = 2; d < x.rank(); ++d) spatial *= static_cast<size_t>(x.shape()[d]);
    // The window of channel c is [c - floor((size-1)/2), c + ceil((size-1)/2)], clipped.
    const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), wx.shape()));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const T* in = wx.data<T>().data();
        T* o = out.mutable_data<T>().data();
        const size_t planes = batch * static_cast<size_t>(channels);
        parallel_for(planes, std::max<size_t>(1, 4096 / std::max<size_t>(spatial, 1)), [&](size_t b, size_t e) {
          for (size_t p = b; p < e; ++p) {
            const int64_t c = static_cast<int64_t>(p % static_cast<size_t>(channels));
            const size_t n = p / static_cast<size_t>(channels);
            const int64_t lo = std::max<int64_t>(0, c - before), hi = std::min<int64_t>(channels - 1, c + after);
            for (size_t s = 0; s < spatial; ++s) {
              double sq = 0;
              for (int64_t k = lo; k <= hi; ++k) {
                const double v = static_cast<double>(in[(n * static_cast<size_t>(channels) + static_cast<size_t>(k)) * spatial + s]);
                sq += v * v;
              }
              const double denom = std::pow(bias_ + alpha_ / static_cast<double>(size_) * sq, beta_);
              o[p * spatial + s] = static_cast<T>(static_cast<double>(in[p * spatial + s]) / denom);
            }
          }
        });
      }
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  double alpha_, beta_, bias_;
  int64_t size_;
};

}  // namespace

Expected<KernelPtr> make_lrn(const Node& node, int64_t) {
  const int64_t size = attr_int(node, "size", 0);
  if (size <= 0) return make_error("size must be a positive integer");
  return KernelPtr(new LrnKernel(attr_float(node, "alpha", 1e-4f), attr_float(node, "beta", 0.75f),
                                 attr_float(node, "bias", 1.0f), size));
}

}  // namespace reduce::ref
