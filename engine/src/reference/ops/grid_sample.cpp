// GridSample (opset 16+, 2-d spatial): samples N,C,H,W input at grid points with padding modes.
#include <cmath>
#include <type_traits>

#include "../kernel.h"
#include "../numeric.h"
#include "../parallel.h"

namespace reduce::ref {

namespace {

enum class Interp { Bilinear, Nearest, Bicubic };
enum class Padding { Zeros, Border, Reflection };

// Folds a coordinate back into [twice_low/2, twice_high/2] by mirroring at the bounds.
double reflect(double x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0;
  const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  x = std::fabs(x - lo);
  const double extra = std::fmod(x, span);
  const double flips = std::floor(x / span);
  return std::fmod(flips, 2.0) == 0 ? extra + lo : span - extra + lo;
}

class GridSampleKernel : public Kernel {
 public:
  GridSampleKernel(Interp interp, Padding padding, bool align) : interp_(interp), padding_(padding), align_(align) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& grid = *ctx.input(1);
    if (x.rank() != 4) return make_error("only 4-d input (N, C, H, W) is supported, got " + shape_to_string(x.shape()));
    if (grid.rank() != 4 || grid.shape()[0] != x.shape()[0] || grid.shape()[3] != 2)
      return make_error("grid must be (N, H_out, W_out, 2), got " + shape_to_string(grid.shape()));
    if (!dtype_is_float(x.dtype()) || !dtype_is_float(grid.dtype())) return make_error("input and grid must be floating point");
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor wg, widen(grid));
    const Shape out_shape{x.shape()[0], x.shape()[1], grid.shape()[1], grid.shape()[2]};
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), out_shape));
    std::vector<double> g(wg.elements());
    visit_dtype(wg.dtype(), [&]<typename G>() {
      if constexpr (std::is_floating_point_v<G>) {
        auto d = wg.data<G>();
        for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<double>(d[i]);
      }
    });
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) run<T>(wx, g, out);
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  double unnormalize(double c, int64_t size) const {
    return align_ ? (c + 1) / 2 * static_cast<double>(size - 1) : ((c + 1) * static_cast<double>(size) - 1) / 2;
  }
  // Border clamps and reflection mirrors a source coordinate into the input.
  double pad_coordinate(double c, int64_t size) const {
    const double hi = static_cast<double>(size - 1);
    if (padding_ == Padding::Border) return std::clamp(c, 0.0, hi);
    if (padding_ == Padding::Reflection) {
      c = align_ ? reflect(c, 0, 2 * hi) : reflect(c, -1, 2 * static_cast<double>(size) - 1);
      return std::clamp(c, 0.0, hi);
    }
    return c;
  }

  template <typename T>
  void run(const Tensor& x, const std::vector<double>& g, Tensor& out) const {
    const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
    const int64_t Ho = out.shape()[2], Wo = out.shape()[3];
    const T* in = x.data<T>().data();
    T* o = out.mutable_data<T>().data();
    const size_t planes = static_cast<size_t>(N * C);
    parallel_for(planes, 1, [&](size_t begin, size_t end) {
      for (size_t p = begin; p < end; ++p) {
        const int64_t n = static_cast<int64_t>(p) / C;
        const T* src = in + p * static_cast<size_t>(H * W);
        auto at = [&](int64_t yy, int64_t xx) -> double {
          return (xx >= 0 && xx < W && yy >= 0 && yy < H) ? static_cast<double>(src[yy * W + xx]) : 0.0;
        };
        for (int64_t i = 0; i < Ho * Wo; ++i) {
          const double gx = g[static_cast<size_t>((n * Ho * Wo + i) * 2)];
          const double gy = g[static_cast<size_t>((n * Ho * Wo + i) * 2 + 1)];
          double ix = unnormalize(gx, W), iy = unnormalize(gy, H);
          double v = 0;
          if (interp_ == Interp::Bicubic) {
            // Each tap is padded on its own (as in PyTorch), the coordinate itself is not.
            ix = in_cast_range(ix, W);
            iy = in_cast_range(iy, H);
            const double fx = std::floor(ix), fy = std::floor(iy);
            double cx[4], cy[4];
            coefficients(ix - fx, cx);
            coefficients(iy - fy, cy);
            for (int r = 0; r < 4; ++r) {
              double row = 0;
              for (int c = 0; c < 4; ++c) row += cx[c] * tap(at, fy - 1 + r, fx - 1 + c, H, W);
              v += cy[r] * row;
            }
          } else {
            ix = in_cast_range(pad_coordinate(ix, W), W);
            iy = in_cast_range(pad_coordinate(iy, H), H);
            if (interp_ == Interp::Nearest) {
              v = at(static_cast<int64_t>(std::nearbyint(iy)), static_cast<int64_t>(std::nearbyint(ix)));
            } else {
              const double x0 = std::floor(ix), y0 = std::floor(iy);
              const double tx = ix - x0, ty = iy - y0;
              const int64_t xi = static_cast<int64_t>(x0), yi = static_cast<int64_t>(y0);
              v = at(yi, xi) * (1 - tx) * (1 - ty) + at(yi, xi + 1) * tx * (1 - ty) + at(yi + 1, xi) * (1 - tx) * ty +
                  at(yi + 1, xi + 1) * tx * ty;
            }
          }
          o[p * static_cast<size_t>(Ho * Wo) + static_cast<size_t>(i)] = static_cast<T>(v);
        }
      }
    });
  }

  template <typename At>
  double tap(At&& at, double y, double x, int64_t H, int64_t W) const {
    const double py = in_cast_range(pad_coordinate(y, H), H), px = in_cast_range(pad_coordinate(x, W), W);
    return at(static_cast<int64_t>(py), static_cast<int64_t>(px));
  }

  // Coordinates far outside (or NaN) read only zero padding; bounding them keeps integer casts defined.
  static double in_cast_range(double c, int64_t size) {
    if (!(c > -8)) return -8;
    return c > static_cast<double>(size) + 8 ? static_cast<double>(size) + 8 : c;
  }

  static void coefficients(double t, double c[4]) {
    const double A = -0.75;
    auto near = [&](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
    auto far = [&](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
    c[0] = far(t + 1);
    c[1] = near(t);
    c[2] = near(1 - t);
    c[3] = far(2 - t);
  }

  Interp interp_;
  Padding padding_;
  bool align_;
};

}  // namespace

Expected<KernelPtr> make_grid_sample(const Node& node, int64_t opset) {
  const std::string m = attr_string(node, "mode", opset >= 20 ? "linear" : "bilinear");
  Interp interp;
  if (m == "bilinear" || m == "linear") interp = Interp::Bilinear;
  else if (m == "nearest") interp = Interp::Nearest;
  else if (m == "bicubic" || m == "cubic") interp = Interp::Bicubic;
  else return make_error("unknown mode '" + m + "'");
  const std::string p = attr_string(node, "padding_mode", "zeros");
  Padding padding;
  if (p == "zeros") padding = Padding::Zeros;
  else if (p == "border") padding = Padding::Border;
  else if (p == "reflection") padding = Padding::Reflection;
  else return make_error("unknown padding_mode '" + p + "'");
  return KernelPtr(new GridSampleKernel(interp, padding, attr_int(node, "align_corners", 0) != 0));
}

}  // namespace reduce::ref
