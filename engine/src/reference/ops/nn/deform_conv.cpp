// DeformConv (opset 19, 2-d): convolution whose kernel taps are moved by learned per-pixel offsets and
// scaled by an optional mask; off-grid taps are read by bilinear interpolation with zeros outside.
#include <algorithm>
#include <cmath>

#include "reference/conv_geometry.h"
#include "reference/float_values.h"
#include "reference/kernel.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

// One input plane [H, W] as doubles.
struct Plane {
  const double* v;
  int64_t h, w;
  double at(int64_t y, int64_t x) const { return y < 0 || y >= h || x < 0 || x >= w ? 0.0 : v[y * w + x]; }
  // GridSample's bilinear rule with zero padding (align_corners): the four neighbours of (y, x)
  // weighted by their distances, neighbours outside the plane counting as zero.
  double bilinear(double y, double x) const {
    if (!(y > -1.0 && y < static_cast<double>(h) && x > -1.0 && x < static_cast<double>(w))) return 0.0;
    const double y0 = std::floor(y), x0 = std::floor(x);
    const double dy = y - y0, dx = x - x0;
    const int64_t iy = static_cast<int64_t>(y0), ix = static_cast<int64_t>(x0);
    return (1 - dy) * (1 - dx) * at(iy, ix) + (1 - dy) * dx * at(iy, ix + 1) + dy * (1 - dx) * at(iy + 1, ix) +
           dy * dx * at(iy + 1, ix + 1);
  }
};

class DeformConvKernel : public Kernel {
 public:
  DeformConvKernel(ConvAttributes attrs, int64_t offset_group) : attrs_(std::move(attrs)), offset_group_(offset_group) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor& offset = *ctx.input(2);
    const Tensor* bias = ctx.input(3);
    const Tensor* mask = ctx.input(4);
    if (x.rank() != 4) return make_error("only 2-d DeformConv (X of rank 4) is supported, got " + shape_to_string(x.shape()));
    for (const Tensor* t : {&w, &offset, bias, mask})
      if (t && t->dtype() != x.dtype()) return make_error("W, offset, B and mask must have the type of X");
    REDUCE_ASSIGN(ConvGeometry g, conv_geometry(attrs_, x.shape(), w.shape()));
    const int64_t og = offset_group_, k = static_cast<int64_t>(g.kernel_size());
    if (g.in_channels % static_cast<size_t>(og) != 0)
      return make_error("input channels " + std::to_string(g.in_channels) + " are not divisible by offset_group " +
                        std::to_string(og));
    const Shape out = g.output_shape();
    const Shape want_offset{out[0], og * 2 * k, out[2], out[3]}, want_mask{out[0], og * k, out[2], out[3]};
    if (offset.shape() != want_offset)
      return make_error("offset must have shape " + shape_to_string(want_offset) + ", got " + shape_to_string(offset.shape()));
    if (mask && mask->shape() != want_mask)
      return make_error("mask must have shape " + shape_to_string(want_mask) + ", got " + shape_to_string(mask->shape()));
    if (bias && bias->shape() != Shape{out[1]})
      return make_error("bias B must have shape [" + std::to_string(out[1]) + "], got " + shape_to_string(bias->shape()));
    // The sampled columns of one image (C x K x out pixels) plus the double copies of every operand.
    REDUCE_ASSIGN(uint64_t columns, element_count(Shape{static_cast<int64_t>(g.in_channels), k, out[2] * out[3]}));
    REDUCE_ASSIGN(uint64_t out_elements, element_count(out));
    uint64_t operands = columns + 2 * out_elements + x.elements() + w.elements() + offset.elements();
    if (mask) operands += mask->elements();
    REDUCE_TRY(ctx.reserve(operands * sizeof(double)));
    Operands o;
    REDUCE_ASSIGN(o.x, float_values(x, "X"));
    REDUCE_ASSIGN(o.w, float_values(w, "W"));
    REDUCE_ASSIGN(o.offset, float_values(offset, "offset"));
    if (bias) {
      REDUCE_ASSIGN(o.bias, float_values(*bias, "B"));
    }
    if (mask) {
      REDUCE_ASSIGN(o.mask, float_values(*mask, "mask"));
    }
    std::vector<double> y(static_cast<size_t>(out_elements));
    std::vector<double> cols(static_cast<size_t>(columns));
    for (size_t n = 0; n < g.batch; ++n) {
      sample_columns(g, o, n, cols);
      convolve(g, o, n, cols, y);
    }
    REDUCE_ASSIGN(Tensor result, tensor_from_doubles(x.dtype(), out, y));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  struct Operands {
    std::vector<double> x, w, offset, bias, mask;  // bias and mask empty when absent
  };

  // cols[c][tap][pixel] = mask * X[n, c] at the tap's displaced position; one chunk per channel.
  void sample_columns(const ConvGeometry& g, const Operands& o, size_t n, std::vector<double>& cols) const {
    const size_t C = g.in_channels, K = g.kernel_size(), P = g.out_size(), OW = g.out[1];
    const size_t per_group = C / static_cast<size_t>(offset_group_);
    const int64_t H = static_cast<int64_t>(g.in[0]), W = static_cast<int64_t>(g.in[1]);
    parallel_for(C, 1, [&](size_t begin, size_t end) {
      for (size_t c = begin; c < end; ++c) {
        const Plane plane{o.x.data() + (n * C + c) * g.in_size(), H, W};
        const size_t grp = c / per_group;
        for (size_t tap = 0; tap < K; ++tap) {
          const size_t ky = tap / g.kernel[1], kx = tap % g.kernel[1];
          // offset is [N, offset_group, K, 2 (y, x), OH, OW]; mask is [N, offset_group, K, OH, OW].
          const double* dy = o.offset.data() + ((n * static_cast<size_t>(offset_group_) + grp) * K + tap) * 2 * P;
          const double* dx = dy + P;
          const double* m = o.mask.empty() ? nullptr : o.mask.data() + ((n * static_cast<size_t>(offset_group_) + grp) * K + tap) * P;
          double* col = cols.data() + (c * K + tap) * P;
          for (size_t p = 0; p < P; ++p) {
            const double py = static_cast<double>(static_cast<int64_t>((p / OW) * g.strides[0] + ky * g.dilations[0]) - g.pad_begin[0]);
            const double px = static_cast<double>(static_cast<int64_t>((p % OW) * g.strides[1] + kx * g.dilations[1]) - g.pad_begin[1]);
            const double v = plane.bilinear(py + dy[p], px + dx[p]);
            col[p] = m ? v * m[p] : v;
          }
        }
      }
    });
  }

  // y[n, m] = B[m] + Σ over the group's channels and taps of W · cols, summed in a fixed order.
  static void convolve(const ConvGeometry& g, const Operands& o, size_t n, const std::vector<double>& cols,
                       std::vector<double>& y) {
    const size_t M = g.out_channels, K = g.kernel_size(), P = g.out_size();
    const size_t cpg = g.in_channels / g.group, mpg = M / g.group;
    parallel_for(M, 1, [&](size_t begin, size_t end) {
      for (size_t m = begin; m < end; ++m) {
        double* dst = y.data() + (n * M + m) * P;
        std::fill(dst, dst + P, o.bias.empty() ? 0.0 : o.bias[m]);
        const size_t c0 = (m / mpg) * cpg;
        for (size_t c = 0; c < cpg; ++c)
          for (size_t tap = 0; tap < K; ++tap) {
            const double wv = o.w[(m * cpg + c) * K + tap];
            const double* col = cols.data() + ((c0 + c) * K + tap) * P;
            for (size_t p = 0; p < P; ++p) dst[p] += wv * col[p];
          }
      }
    });
  }

  ConvAttributes attrs_;
  int64_t offset_group_;
};

}  // namespace

Expected<KernelPtr> make_deform_conv(const Node& node, int64_t) {
  if (node.attribute("auto_pad")) return make_error("DeformConv has no auto_pad attribute");
  REDUCE_ASSIGN(ConvAttributes attrs, parse_conv_attributes(node, false));
  const int64_t offset_group = attr_int(node, "offset_group", 1);
  if (offset_group < 1 || offset_group > (int64_t{1} << 20)) return make_error("offset_group must be positive");
  return KernelPtr(new DeformConvKernel(std::move(attrs), offset_group));
}

}  // namespace reduce::ref
