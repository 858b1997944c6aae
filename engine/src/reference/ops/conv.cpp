// Conv: N-d convolution with groups, strides, dilations, pads and auto_pad; sums in double, bias added before rounding.
#include <type_traits>

#include "../conv_engine.h"
#include "../kernel.h"
#include "../numeric.h"

namespace reduce::ref {

namespace {

class ConvKernel : public Kernel {
 public:
  explicit ConvKernel(ConvAttributes attrs) : attrs_(std::move(attrs)) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor* b = ctx.input_count() > 2 ? ctx.input(2) : nullptr;
    if (!dtype_is_float(x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    if (w.dtype() != x.dtype() || (b && b->dtype() != x.dtype()))
      return make_error("inputs X, W and B must have the same type");
    REDUCE_ASSIGN(ConvGeometry g, conv_geometry(attrs_, x.shape(), w.shape()));
    if (b && (b->rank() != 1 || static_cast<size_t>(b->shape()[0]) != g.out_channels))
      return make_error("bias B must have shape [" + std::to_string(g.out_channels) + "], got " +
                        shape_to_string(b->shape()));
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor ww, widen(w));
    REDUCE_ASSIGN(Tensor wd, Tensor::allocate(DType::Double, {static_cast<int64_t>(ww.elements())}));
    Tensor wb;
    if (b) {
      REDUCE_ASSIGN(wb, widen(*b));
    }
    std::vector<double> bias(g.out_channels, 0.0);
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), g.output_shape()));
    Status status;
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        auto wsrc = ww.data<T>();
        auto wdst = wd.mutable_data<double>();
        for (size_t i = 0; i < wsrc.size(); ++i) wdst[i] = static_cast<double>(wsrc[i]);
        if (b)
          for (size_t m = 0; m < bias.size(); ++m) bias[m] = static_cast<double>(wb.data<T>()[m]);
        T* y = out.mutable_data<T>().data();
        const size_t os = g.out_size(), M = g.out_channels;
        status = conv_forward(g, wx.data<T>().data(), 0.0, wd.data<double>().data(),
                              [&](size_t n, size_t m, size_t pos, size_t count, const double* sums) {
                                T* dst = y + (n * M + m) * os + pos;
                                const double bm = bias[m];
                                for (size_t j = 0; j < count; ++j) dst[j] = static_cast<T>(sums[j] + bm);
                              });
      }
    });
    REDUCE_TRY(status);
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  ConvAttributes attrs_;
};

}  // namespace

Expected<KernelPtr> make_conv(const Node& node, int64_t) {
  REDUCE_ASSIGN(ConvAttributes attrs, parse_conv_attributes(node, false));
  return KernelPtr(new ConvKernel(std::move(attrs)));
}

}  // namespace reduce::ref
