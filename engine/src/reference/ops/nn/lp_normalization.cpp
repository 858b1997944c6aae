// LpNormalization: divides each vector along an axis by its L1 or L2 norm (summed in double).
#include <cmath>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

class LpNormalizationKernel : public Kernel {
 public:
  LpNormalizationKernel(int64_t axis, int64_t p) : axis_(axis), p_(p) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (!dtype_is_float(x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    if (x.rank() == 0) return make_error("needs an input of rank 1 or more");
    REDUCE_ASSIGN(size_t axis, normalize_axis(axis_, x.rank()));
    size_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(x.shape()[d]);
    for (size_t d = axis + 1; d < x.rank(); ++d) inner *= static_cast<size_t>(x.shape()[d]);
    const size_t n = static_cast<size_t>(x.shape()[axis]);
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), wx.shape()));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const T* in = wx.data<T>().data();
        T* o = out.mutable_data<T>().data();
        // One vector per (outer, inner) pair; each is summed by one chunk, in order.
        parallel_for(outer * inner, std::max<size_t>(1, 16384 / std::max<size_t>(n, 1)), [&](size_t b, size_t e) {
          for (size_t v = b; v < e; ++v) {
            const size_t base = (v / inner) * n * inner + v % inner;
            double sum = 0;
            for (size_t k = 0; k < n; ++k) {
              const double a = static_cast<double>(in[base + k * inner]);
              sum += p_ == 1 ? std::abs(a) : a * a;
            }
            // A zero vector stays zero (the ONNX test data's choice), rather than 0/0 = NaN.
            const double norm = sum == 0 ? 1.0 : p_ == 1 ? sum : std::sqrt(sum);
            for (size_t k = 0; k < n; ++k)
              o[base + k * inner] = static_cast<T>(static_cast<double>(in[base + k * inner]) / norm);
          }
        });
      }
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  int64_t axis_, p_;
};

}  // namespace

Expected<KernelPtr> make_lp_normalization(const Node& node, int64_t) {
  const int64_t p = attr_int(node, "p", 2);
  if (p != 1 && p != 2) return make_error("p must be 1 or 2, got " + std::to_string(p));
  return KernelPtr(new LpNormalizationKernel(attr_int(node, "axis", -1), p));
}

}  // namespace reduce::ref
