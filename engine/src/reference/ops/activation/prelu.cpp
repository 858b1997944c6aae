// PRelu: x < 0 ? slope * x : x, the slope broadcast to X (per channel before opset 7).
#include <type_traits>

#include "reference/elementwise.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

class PReluKernel : public Kernel {
 public:
  explicit PReluKernel(bool legacy) : legacy_(legacy) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& slope = *ctx.input(1);
    if (x.dtype() != slope.dtype())
      return make_error("X and slope have different types (" + std::string(dtype_name(x.dtype())) + " and " +
                        std::string(dtype_name(slope.dtype())) + ")");
    if (x.dtype() == DType::Bool || dtype_size(x.dtype()) == 0)
      return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    REDUCE_ASSIGN(Shape slope_shape, slope_shape_for(x.shape(), slope.shape()));
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor ws, widen(slope));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), wx.shape()));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        map_binary(wx.data<T>(), wx.shape(), ws.data<T>(), slope_shape, out.mutable_data<T>(), wx.shape(),
                   [](T v, T s) { return v < 0 ? s * v : v; });
      } else if constexpr (!std::is_same_v<T, bool>) {
        map_binary(wx.data<T>(), wx.shape(), ws.data<T>(), slope_shape, out.mutable_data<T>(), wx.shape(),
                   [](T v, T s) { return v < 0 ? wrap_mul(s, v) : v; });
      }
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  // The slope's shape as broadcast against X: unidirectional (numpy) broadcasting; before opset 7 a
  // 1-D slope of X's channel count applies per channel (axis 1).
  Expected<Shape> slope_shape_for(const Shape& x, const Shape& slope) const {
    const Shape shapes[] = {x, slope};
    auto out = broadcast_shapes(shapes);
    if (out.ok() && *out == x) return slope;
    if (legacy_ && slope.size() == 1 && x.size() >= 2 && slope[0] == x[1]) {
      Shape per_channel(x.size() - 1, 1);
      per_channel[0] = slope[0];
      return per_channel;
    }
    return make_error("slope of shape " + shape_to_string(slope) + " cannot be broadcast to X of shape " +
                      shape_to_string(x));
  }

  bool legacy_;
};

}  // namespace

Expected<KernelPtr> make_prelu(const Node&, int64_t opset) { return KernelPtr(new PReluKernel(opset < 7)); }

}  // namespace reduce::ref
