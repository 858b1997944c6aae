// MeanVarianceNormalization: (X - mean) / (sqrt(variance) + 1e-9) over the given axes.
#include <cmath>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"
#include "reference/reduction_plan.h"

namespace reduce::ref {

namespace {

class MeanVarianceNormKernel : public Kernel {
 public:
  explicit MeanVarianceNormKernel(std::vector<int64_t> axes) : axes_(std::move(axes)) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (!dtype_is_float(x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    std::vector<bool> reduced(x.rank(), false);
    for (int64_t a : axes_) {
      REDUCE_ASSIGN(size_t d, normalize_axis(a, x.rank()));
      if (x.rank() == 0) continue;
      if (reduced[d]) return make_error("axis " + std::to_string(a) + " is repeated");
      reduced[d] = true;
    }
    const ReductionPlan plan = make_reduction_plan(x.shape(), reduced, true);
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), wx.shape()));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const T* in = wx.data<T>().data();
        T* o = out.mutable_data<T>().data();
        const auto& offs = plan.offsets;
        const size_t n = offs.size();
        if (n == 0) return;
        // Each group of reduced elements is written by exactly one chunk.
        parallel_for(plan.base.size(), std::max<size_t>(1, 16384 / n), [&](size_t b, size_t e) {
          for (size_t g = b; g < e; ++g) {
            const T* xi = in + plan.base[g];
            T* yi = o + plan.base[g];
            double sum = 0;
            for (size_t r = 0; r < n; ++r) sum += static_cast<double>(xi[offs[r]]);
            const double mean = sum / static_cast<double>(n);
            double sq = 0;
            for (size_t r = 0; r < n; ++r) {
              const double d = static_cast<double>(xi[offs[r]]) - mean;
              sq += d * d;
            }
            const double denom = std::sqrt(sq / static_cast<double>(n)) + 1e-9;
            for (size_t r = 0; r < n; ++r) yi[offs[r]] = static_cast<T>((static_cast<double>(xi[offs[r]]) - mean) / denom);
          }
        });
      }
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  std::vector<int64_t> axes_;
};

}  // namespace

Expected<KernelPtr> make_mean_variance_normalization(const Node& node, int64_t) {
  return KernelPtr(new MeanVarianceNormKernel(attr_ints(node, "axes", {0, 2, 3})));
}

}  // namespace reduce::ref
