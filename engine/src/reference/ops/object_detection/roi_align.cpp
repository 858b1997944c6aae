// RoiAlign (opset 10, 16): average or max of bilinear samples over each bin of each region of interest.
#include <cmath>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

class RoiAlignKernel : public Kernel {
 public:
  RoiAlignKernel(bool max_mode, int64_t oh, int64_t ow, int64_t ratio, double scale, bool half_pixel)
      : max_(max_mode), oh_(oh), ow_(ow), ratio_(ratio), scale_(scale), half_pixel_(half_pixel) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& rois = *ctx.input(1);
    const Tensor& bidx = *ctx.input(2);
    if (x.rank() != 4) return make_error("input must be (N, C, H, W), got " + shape_to_string(x.shape()));
    if (!dtype_is_float(x.dtype()) || rois.dtype() != x.dtype()) return make_error("input and rois must share a float type");
    if (rois.rank() != 2 || rois.shape()[1] != 4) return make_error("rois must be (num_rois, 4), got " + shape_to_string(rois.shape()));
    if (bidx.dtype() != DType::Int64 || bidx.elements() != static_cast<uint64_t>(rois.shape()[0]))
      return make_error("batch_indices must be int64 with one value per roi");
    const int64_t R = rois.shape()[0];
    for (int64_t b : bidx.data<int64_t>())
      if (b < 0 || b >= x.shape()[0]) return make_error("batch index " + std::to_string(b) + " is out of range");
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor wr, widen(rois));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), {R, x.shape()[1], oh_, ow_}));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) run<T>(wx, wr, bidx.data<int64_t>().data(), out);
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  template <typename T>
  void run(const Tensor& x, const Tensor& rois, const int64_t* bidx, Tensor& out) const {
    const int64_t C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
    const int64_t R = rois.shape()[0];
    const T* in = x.data<T>().data();
    const T* roi = rois.data<T>().data();
    T* o = out.mutable_data<T>().data();
    parallel_for(static_cast<size_t>(R * C), 1, [&](size_t begin, size_t end) {
      for (size_t rc = begin; rc < end; ++rc) {
        const int64_t r = static_cast<int64_t>(rc) / C, c = static_cast<int64_t>(rc) % C;
        const T* src = in + (bidx[r] * C + c) * H * W;
        const double offset = half_pixel_ ? 0.5 : 0.0;
        const double x0 = static_cast<double>(roi[r * 4]) * scale_ - offset;
        const double y0 = static_cast<double>(roi[r * 4 + 1]) * scale_ - offset;
        const double x1 = static_cast<double>(roi[r * 4 + 2]) * scale_ - offset;
        const double y1 = static_cast<double>(roi[r * 4 + 3]) * scale_ - offset;
        double rw = x1 - x0, rh = y1 - y0;
        if (!half_pixel_) {  // the legacy mode forces regions to be at least one pixel
          rw = std::max(rw, 1.0);
          rh = std::max(rh, 1.0);
        }
        const double bh = rh / static_cast<double>(oh_), bw = rw / static_cast<double>(ow_);
        const int64_t gh = grid(rh, oh_), gw = grid(rw, ow_);
        const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
        for (int64_t ph = 0; ph < oh_; ++ph) {
          for (int64_t pw = 0; pw < ow_; ++pw) {
            double acc = 0;
            bool any = false;
            for (int64_t iy = 0; iy < gh; ++iy) {
              const double y = y0 + static_cast<double>(ph) * bh + (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
              for (int64_t ix = 0; ix < gw; ++ix) {
                const double xx = x0 + static_cast<double>(pw) * bw + (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
                double w[4] = {0, 0, 0, 0};
                int64_t pos[4] = {0, 0, 0, 0};
                bilinear(y, xx, H, W, w, pos);
                if (max_) {
                  // Max of the weighted corners, as ONNX Runtime and the ONNX reference define it.
                  double m = w[0] * static_cast<double>(src[pos[0]]);
                  for (int k = 1; k < 4; ++k) m = std::max(m, w[k] * static_cast<double>(src[pos[k]]));
                  acc = any ? std::max(acc, m) : m;
                  any = true;
                } else {
                  for (int k = 0; k < 4; ++k) acc += w[k] * static_cast<double>(src[pos[k]]);
                }
              }
            }
            o[(static_cast<int64_t>(rc) * oh_ + ph) * ow_ + pw] = static_cast<T>(max_ ? acc : acc / count);
          }
        }
      }
    });
  }

  // Samples per bin along one axis: sampling_ratio, or adaptive (ceil of the bin size, bounded for NaN and huge rois).
  int64_t grid(double len, int64_t bins) const {
    if (ratio_ > 0) return ratio_;
    const double g = std::ceil(len / static_cast<double>(bins));
    if (!(g > 0)) return 0;
    return g < 4096 ? static_cast<int64_t>(g) : 4096;
  }

  // Corner positions and weights of a sample; samples more than one pixel outside contribute zero.
  static void bilinear(double y, double x, int64_t H, int64_t W, double w[4], int64_t pos[4]) {
    if (!(y >= -1.0 && y <= static_cast<double>(H) && x >= -1.0 && x <= static_cast<double>(W))) return;
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    int64_t yl = static_cast<int64_t>(y), xl = static_cast<int64_t>(x), yh, xh;
    if (yl >= H - 1) {
      yh = yl = H - 1;
      y = static_cast<double>(yl);
    } else {
      yh = yl + 1;
    }
    if (xl >= W - 1) {
      xh = xl = W - 1;
      x = static_cast<double>(xl);
    } else {
      xh = xl + 1;
    }
    const double ly = y - static_cast<double>(yl), lx = x - static_cast<double>(xl), hy = 1 - ly, hx = 1 - lx;
    w[0] = hy * hx;
    w[1] = hy * lx;
    w[2] = ly * hx;
    w[3] = ly * lx;
    pos[0] = yl * W + xl;
    pos[1] = yl * W + xh;
    pos[2] = yh * W + xl;
    pos[3] = yh * W + xh;
  }

  bool max_;
  int64_t oh_, ow_, ratio_;
  double scale_;
  bool half_pixel_;
};

}  // namespace

Expected<KernelPtr> make_roi_align(const Node& node, int64_t opset) {
  const std::string mode = attr_string(node, "mode", "avg");
  if (mode != "avg" && mode != "max") return make_error("unknown mode '" + mode + "'");
  const int64_t oh = attr_int(node, "output_height", 1), ow = attr_int(node, "output_width", 1);
  const int64_t ratio = attr_int(node, "sampling_ratio", 0);
  if (oh <= 0 || ow <= 0 || oh > (1 << 20) || ow > (1 << 20)) return make_error("output_height and output_width must be positive");
  if (ratio < 0 || ratio > (1 << 16)) return make_error("sampling_ratio must be between 0 and 65536");
  const std::string t = attr_string(node, "coordinate_transformation_mode", opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (t != "half_pixel" && t != "output_half_pixel") return make_error("unknown coordinate_transformation_mode '" + t + "'");
  return KernelPtr(new RoiAlignKernel(mode == "max", oh, ow, ratio, attr_float(node, "spatial_scale", 1.0f), t == "half_pixel"));
}

}  // namespace reduce::ref
