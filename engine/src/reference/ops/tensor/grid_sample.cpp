// GridSample (opset 16+; 1 to 3 spatial dims, cubic in 2-d only): samples N,C,D...,H,W input at grid points
// with padding modes.
#include <cmath>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

enum class Interp { Bilinear, Nearest, Bicubic };
enum class Padding { Zeros, Border, Reflection };

constexpr size_t kMaxSpatial = 3;

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
    if (x.rank() < 3 || x.rank() > kMaxSpatial + 2)
      return make_error("input must be (N, C) and 1 to 3 spatial dims, got " + shape_to_string(x.shape()));
    const size_t r = x.rank() - 2;
    if (interp_ == Interp::Bicubic && r != 2) return make_error("cubic mode needs 4-d input (N, C, H, W)");
    if (grid.rank() != x.rank() || grid.shape()[0] != x.shape()[0] || grid.shape().back() != static_cast<int64_t>(r))
      return make_error("grid must be (N, spatial out dims..., " + std::to_string(r) + "), got " + shape_to_string(grid.shape()));
    if (!dtype_is_float(x.dtype()) || !dtype_is_float(grid.dtype())) return make_error("input and grid must be floating point");
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor wg, widen(grid));
    Shape out_shape = grid.shape();
    out_shape.pop_back();
    out_shape.insert(out_shape.begin() + 1, x.shape()[1]);
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

  // Spatial axes are in tensor order (D, H, W); a grid point lists its coordinates the other way (x, y, z).
  template <typename T>
  void run(const Tensor& x, const std::vector<double>& g, Tensor& out) const {
    const size_t r = x.rank() - 2;
    const int64_t C = x.shape()[1];
    int64_t size[kMaxSpatial], stride[kMaxSpatial];
    int64_t plane = 1, points = 1;
    for (size_t a = r; a-- > 0;) {
      size[a] = x.shape()[a + 2];
      stride[a] = plane;
      plane *= size[a];
      points *= out.shape()[a + 2];
    }
    const T* in = x.data<T>().data();
    T* o = out.mutable_data<T>().data();
    const size_t planes = static_cast<size_t>(x.shape()[0] * C);
    parallel_for(planes, 1, [&](size_t begin, size_t end) {
      for (size_t p = begin; p < end; ++p) {
        const int64_t n = static_cast<int64_t>(p) / C;
        const T* src = in + p * static_cast<size_t>(plane);
        auto at = [&](const int64_t* idx) -> double {
          int64_t off = 0;
          for (size_t a = 0; a < r; ++a) {
            if (idx[a] < 0 || idx[a] >= size[a]) return 0.0;
            off += idx[a] * stride[a];
          }
          return static_cast<double>(src[off]);
        };
        for (int64_t i = 0; i < points; ++i) {
          const double* gp = &g[static_cast<size_t>((n * points + i) * static_cast<int64_t>(r))];
          double c[kMaxSpatial];
          for (size_t a = 0; a < r; ++a) c[a] = unnormalize(gp[r - 1 - a], size[a]);
          const double v = interp_ == Interp::Bicubic ? bicubic(at, c[0], c[1], size[0], size[1]) : sample(at, c, size, r);
          o[p * static_cast<size_t>(points) + static_cast<size_t>(i)] = static_cast<T>(v);
        }
      }
    });
  }

  // Nearest or (multi)linear sampling at the unnormalized coordinates c.
  template <typename At>
  double sample(At&& at, double* c, const int64_t* size, size_t r) const {
    int64_t idx[kMaxSpatial];
    for (size_t a = 0; a < r; ++a) c[a] = in_cast_range(pad_coordinate(c[a], size[a]), size[a]);
    if (interp_ == Interp::Nearest) {
      for (size_t a = 0; a < r; ++a) idx[a] = static_cast<int64_t>(std::nearbyint(c[a]));
      return at(idx);
    }
    double t[kMaxSpatial];
    int64_t base[kMaxSpatial];
    for (size_t a = 0; a < r; ++a) {
      const double f = std::floor(c[a]);
      t[a] = c[a] - f;
      base[a] = static_cast<int64_t>(f);
    }
    // Corners in row-major order (the last axis varies fastest); each value is scaled by the weights of
    // the last axis first, so the 2-d case keeps the order v * wx * wy.
    double v = 0;
    for (size_t corner = 0; corner < (size_t{1} << r); ++corner) {
      for (size_t a = 0; a < r; ++a) idx[a] = base[a] + static_cast<int64_t>((corner >> (r - 1 - a)) & 1);
      double term = at(idx);
      for (size_t a = r; a-- > 0;) term *= ((corner >> (r - 1 - a)) & 1) ? t[a] : 1 - t[a];
      v += term;
    }
    return v;
  }

  // Each tap is padded on its own (as in PyTorch), the coordinate itself is not.
  template <typename At>
  double bicubic(At&& at, double iy, double ix, int64_t H, int64_t W) const {
    ix = in_cast_range(ix, W);
    iy = in_cast_range(iy, H);
    const double fx = std::floor(ix), fy = std::floor(iy);
    double cx[4], cy[4];
    coefficients(ix - fx, cx);
    coefficients(iy - fy, cy);
    double v = 0;
    for (int r = 0; r < 4; ++r) {
      double row = 0;
      for (int c = 0; c < 4; ++c) row += cx[c] * tap(at, fy - 1 + r, fx - 1 + c, H, W);
      v += cy[r] * row;
    }
    return v;
  }

  template <typename At>
  double tap(At&& at, double y, double x, int64_t H, int64_t W) const {
    const double py = in_cast_range(pad_coordinate(y, H), H), px = in_cast_range(pad_coordinate(x, W), W);
    const int64_t idx[2] = {static_cast<int64_t>(py), static_cast<int64_t>(px)};
    return at(idx);
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
