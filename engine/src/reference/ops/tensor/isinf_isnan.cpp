// IsInf (detect_positive / detect_negative) and IsNaN: bool masks of float tensors.
#include <cmath>
#include <type_traits>

#include "reference/elementwise.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

class FloatClassKernel : public Kernel {
 public:
  // nan: IsNaN; otherwise IsInf with the signs to detect.
  FloatClassKernel(bool nan, bool positive, bool negative) : nan_(nan), positive_(positive), negative_(negative) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (!dtype_is_float(x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    // Widening half types keeps NaN and infinities, so the float test is exact.
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(DType::Bool, x.shape()));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const bool nan = nan_, pos = positive_, neg = negative_;
        map_unary(wx.data<T>(), out.mutable_data<uint8_t>(), [nan, pos, neg](T v) -> uint8_t {
          if (nan) return std::isnan(v);
          return std::isinf(v) && (v > 0 ? pos : neg);
        });
      }
    });
    ctx.set_output(0, std::move(out));
    return {};
  }

 private:
  bool nan_, positive_, negative_;
};

}  // namespace

Expected<KernelPtr> make_isnan(const Node&, int64_t) { return KernelPtr(new FloatClassKernel(true, false, false)); }
Expected<KernelPtr> make_isinf(const Node& n, int64_t) {
  return KernelPtr(new FloatClassKernel(false, attr_int(n, "detect_positive", 1) != 0, attr_int(n, "detect_negative", 1) != 0));
}

}  // namespace reduce::ref
