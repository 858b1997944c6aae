// Conv: N-d convolution with groups, strides, dilations, pads and auto_pad; sums in double, bias added before rounding.
#include <type_traits>

#include "reference/conv_engine.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

class ConvKernel : public Kernel {
 public:
  explicit ConvKernel(ConvAttributes attrs) : attrs_(std::move(attrs)) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor* b = ctx.input_count() > 2 ? ctx.input(2) : nullptr;
    REDUCE_ASSIGN(ConvProblem problem, float_conv_problem(attrs_, x, w, b, false));
    const ConvGeometry& g = problem.geometry;
    const Tensor &wx = problem.ops.x, &ww = problem.ops.w, &wb = problem.ops.b;
    std::vector<double> bias(g.out_channels, 0.0);
    REDUCE_ASSIGN(Tensor out, Tensor::allocate_uninitialized(wx.dtype(), g.output_shape()));
    Status status;
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        if (b)
          for (size_t m = 0; m < bias.size(); ++m) bias[m] = static_cast<double>(wb.data<T>()[m]);
        T* y = out.mutable_data<T>().data();
        const size_t os = g.out_size(), M = g.out_channels;
        status = conv_forward(g, wx.data<T>().data(), 0.0, ww.data<T>().data(),
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
