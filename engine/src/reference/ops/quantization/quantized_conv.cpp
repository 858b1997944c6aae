// ConvInteger and QLinearConv: integer convolution with zero points (sums exact in double), then requantization.
#include <cmath>
#include <type_traits>

#include "reference/conv_engine.h"
#include "reference/kernel.h"

namespace reduce::ref {

namespace {

bool is_8bit(DType t) { return t == DType::UInt8 || t == DType::Int8; }

// A per-tensor value (one element) or, when per_channel > 0, one value per output channel.
Expected<std::vector<double>> per_channel_values(const Tensor* t, const char* name, size_t channels,
                                                 bool allow_per_channel) {
  if (!t) return std::vector<double>(channels, 0.0);
  if (t->elements() == 1 && t->rank() <= 1) return std::vector<double>(channels, t->element_as_double(0));
  if (allow_per_channel && t->rank() == 1 && t->elements() == channels) {
    std::vector<double> v(channels);
    for (size_t i = 0; i < channels; ++i) v[i] = t->element_as_double(i);
    return v;
  }
  return make_error(std::string(name) + " must be a scalar" + (allow_per_channel ? " or have one value per output channel" : "") +
                    ", got shape " + shape_to_string(t->shape()));
}

// The double weight matrix [M, C/group * kernel] with the zero point of each output channel subtracted.
Expected<Tensor> offset_weights(const Tensor& w, const std::vector<double>& zero_points) {
  REDUCE_ASSIGN(Tensor wd, Tensor::allocate(DType::Double, {static_cast<int64_t>(w.elements())}));
  auto dst = wd.mutable_data<double>();
  const size_t per = zero_points.empty() ? 0 : dst.size() / zero_points.size();
  for (size_t i = 0; i < dst.size(); ++i) dst[i] = w.element_as_double(i) - zero_points[per ? i / per : 0];
  return wd;
}

// Runs the convolution of x (uint8 or int8) reading x - x_zero_point; epilogue as conv_forward's.
template <typename Epilogue>
Status run_quantized(const ConvGeometry& g, const Tensor& x, double x_zero, const Tensor& wd, const Epilogue& epi) {
  const double* w = wd.data<double>().data();
  if (x.dtype() == DType::UInt8) return conv_forward(g, x.data<uint8_t>().data(), x_zero, w, epi);
  return conv_forward(g, x.data<int8_t>().data(), x_zero, w, epi);
}

// Integer sums wrap to int32, as an int32 accumulator would.
int32_t wrap_int32(double sum) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(sum))); }

class ConvIntegerKernel : public Kernel {
 public:
  explicit ConvIntegerKernel(ConvAttributes attrs) : attrs_(std::move(attrs)) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    if (!is_8bit(x.dtype()) || !is_8bit(w.dtype())) return make_error("inputs x and w must be uint8 or int8");
    REDUCE_ASSIGN(ConvGeometry g, conv_geometry(attrs_, x.shape(), w.shape()));
    REDUCE_ASSIGN(auto xz, per_channel_values(ctx.input_count() > 2 ? ctx.input(2) : nullptr, "x_zero_point", 1, false));
    REDUCE_ASSIGN(auto wz, per_channel_values(ctx.input_count() > 3 ? ctx.input(3) : nullptr, "w_zero_point",
                                              g.out_channels, true));
    REDUCE_ASSIGN(Tensor wd, offset_weights(w, wz));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(DType::Int32, g.output_shape()));
    int32_t* y = out.mutable_data<int32_t>().data();
    const size_t os = g.out_size(), M = g.out_channels;
    REDUCE_TRY(run_quantized(g, x, xz[0], wd, [&](size_t n, size_t m, size_t pos, size_t count, const double* sums) {
      int32_t* dst = y + (n * M + m) * os + pos;
      for (size_t j = 0; j < count; ++j) dst[j] = wrap_int32(sums[j]);
    }));
    ctx.set_output(0, std::move(out));
    return {};
  }

 private:
  ConvAttributes attrs_;
};

class QLinearConvKernel : public Kernel {
 public:
  explicit QLinearConvKernel(ConvAttributes attrs) : attrs_(std::move(attrs)) {}

  Status compute(KernelContext& ctx) const override {
    for (size_t i = 0; i < 8; ++i)
      if (!ctx.input(i)) return make_error("input " + std::to_string(i) + " is required");
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(3);
    const Tensor& y_zero = *ctx.input(7);
    const Tensor* b = ctx.input_count() > 8 ? ctx.input(8) : nullptr;
    if (!is_8bit(x.dtype()) || !is_8bit(w.dtype()) || !is_8bit(y_zero.dtype()))
      return make_error("x, w and y_zero_point must be uint8 or int8");
    for (size_t i : {1, 4, 6})
      if (ctx.input(i)->dtype() != DType::Float) return make_error("scales must be float");
    if (b && b->dtype() != DType::Int32) return make_error("bias B must be int32");
    REDUCE_ASSIGN(ConvGeometry g, conv_geometry(attrs_, x.shape(), w.shape()));
    const size_t M = g.out_channels, os = g.out_size();
    REDUCE_ASSIGN(auto xs, per_channel_values(ctx.input(1), "x_scale", 1, false));
    REDUCE_ASSIGN(auto xz, per_channel_values(ctx.input(2), "x_zero_point", 1, false));
    REDUCE_ASSIGN(auto ws, per_channel_values(ctx.input(4), "w_scale", M, true));
    REDUCE_ASSIGN(auto wz, per_channel_values(ctx.input(5), "w_zero_point", M, true));
    REDUCE_ASSIGN(auto ys, per_channel_values(ctx.input(6), "y_scale", 1, false));
    REDUCE_ASSIGN(auto yz, per_channel_values(&y_zero, "y_zero_point", 1, false));
    if (b && (b->rank() != 1 || static_cast<size_t>(b->shape()[0]) != M))
      return make_error("bias B must have shape [" + std::to_string(M) + "]");
    // The multiplier is formed in float, as the scales are float; the sum is applied to it in double.
    std::vector<double> scale(M), bias(M, 0.0);
    for (size_t m = 0; m < M; ++m) {
      scale[m] = static_cast<double>(static_cast<float>(xs[0]) * static_cast<float>(ws[m]) / static_cast<float>(ys[0]));
      if (b) bias[m] = b->data<int32_t>()[m];
    }
    REDUCE_ASSIGN(Tensor wd, offset_weights(w, wz));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(y_zero.dtype(), g.output_shape()));
    const bool is_unsigned = y_zero.dtype() == DType::UInt8;
    const double lo = is_unsigned ? 0 : -128, hi = is_unsigned ? 255 : 127;
    std::byte* y = out.mutable_bytes().data();
    REDUCE_TRY(run_quantized(g, x, xz[0], wd, [&](size_t n, size_t m, size_t pos, size_t count, const double* sums) {
      const size_t at = (n * M + m) * os + pos;
      for (size_t j = 0; j < count; ++j) {
        const double acc = static_cast<double>(wrap_int32(sums[j] + bias[m]));
        const double q = std::clamp(std::nearbyint(acc * scale[m]) + yz[0], lo, hi);
        y[at + j] = is_unsigned ? static_cast<std::byte>(static_cast<uint8_t>(q))
                                : static_cast<std::byte>(static_cast<int8_t>(q));
      }
    }));
    ctx.set_output(0, std::move(out));
    return {};
  }

 private:
  ConvAttributes attrs_;
};

}  // namespace

Expected<KernelPtr> make_conv_integer(const Node& node, int64_t) {
  REDUCE_ASSIGN(ConvAttributes attrs, parse_conv_attributes(node, false));
  return KernelPtr(new ConvIntegerKernel(std::move(attrs)));
}

Expected<KernelPtr> make_qlinear_conv(const Node& node, int64_t) {
  REDUCE_ASSIGN(ConvAttributes attrs, parse_conv_attributes(node, false));
  return KernelPtr(new QLinearConvKernel(std::move(attrs)));
}

}  // namespace reduce::ref
