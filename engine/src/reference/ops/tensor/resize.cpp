// Resize (opset 10+) and Upsample (7-9): nearest, linear and cubic interpolation per axis, separable;
// antialias (opset 18+) widens the linear and cubic filters by 1/scale when downsampling.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

enum class Mode { Nearest, Linear, Cubic };
enum class Transform { HalfPixel, HalfPixelSymmetric, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNn, TfCropAndResize };
enum class Rounding { PreferFloor, PreferCeil, Floor, Ceil, Legacy };

struct ResizeAttrs {
  Mode mode = Mode::Nearest;
  Transform transform = Transform::HalfPixel;
  Rounding rounding = Rounding::PreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0;
  std::vector<int64_t> axes;         // opset 18: the axes scales/sizes refer to
  std::string keep_aspect = "stretch";
  std::vector<float> attr_scales;    // Upsample-7
  int scales_input = -1, sizes_input = -1, roi_input = -1;
};

// How one output axis reads the input: `taps` input indices and weights per output coordinate.
struct AxisMap {
  size_t taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> outside;  // tf_crop_and_resize: coordinate outside the input, use extrapolation
  bool identity = false;
};

double to_original(const ResizeAttrs& a, double x, double scale, int64_t in, int64_t out, double roi_start, double roi_end) {
  const double out_f = scale * static_cast<double>(in);  // the spec's length_resized before flooring
  switch (a.transform) {
    case Transform::HalfPixel: return (x + 0.5) / scale - 0.5;
    case Transform::HalfPixelSymmetric: {
      const double adjustment = static_cast<double>(out) / out_f;
      const double center = static_cast<double>(in) / 2;
      return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
    }
    case Transform::PytorchHalfPixel: return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case Transform::AlignCorners: return out_f == 1 ? 0.0 : x * static_cast<double>(in - 1) / (out_f - 1);
    case Transform::Asymmetric: return x / scale;
    case Transform::TfHalfPixelForNn: return (x + 0.5) / scale;
    case Transform::TfCropAndResize:
      if (out_f == 1) return (roi_end - roi_start) * static_cast<double>(in - 1) / 2 + roi_start * static_cast<double>(in - 1);
      return x * (roi_end - roi_start) * static_cast<double>(in - 1) / (out_f - 1) + roi_start * static_cast<double>(in - 1);
  }
  return x;
}

int64_t nearest_index(Rounding r, double x, bool downsample) {
  const double f = std::floor(x);
  switch (r) {
    case Rounding::PreferFloor: return static_cast<int64_t>(x - f == 0.5 ? f : std::round(x));
    case Rounding::PreferCeil: return static_cast<int64_t>(x - f == 0.5 ? f + 1 : std::round(x));
    case Rounding::Floor: return static_cast<int64_t>(f);
    case Rounding::Ceil: return static_cast<int64_t>(std::ceil(x));
    case Rounding::Legacy: return static_cast<int64_t>(downsample ? std::ceil(x) : f);
  }
  return 0;
}

void cubic_coefficients(double t, double A, double c[4]) {
  const double t1 = t + 1, s = 1 - t, s1 = s + 1;
  c[0] = ((A * t1 - 5 * A) * t1 + 8 * A) * t1 - 4 * A;
  c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
  c[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
  c[3] = ((A * s1 - 5 * A) * s1 + 8 * A) * s1 - 4 * A;
}

double cubic_kernel(double x, double A) {
  x = std::fabs(x);
  if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
  if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  return 0;
}

// With antialias, a downsampling axis (scale < 1) uses the linear (support 1) or cubic (support 2)
// filter stretched by 1/scale: taps at offsets [start, 1 - start] from the left neighbour, start =
// floor(-support / scale) + 1. Otherwise the filter is the plain one.
bool antialiased(const ResizeAttrs& a, double scale) { return a.antialias && a.mode != Mode::Nearest && scale < 1; }
int64_t antialias_start(const ResizeAttrs& a, double scale) {
  return static_cast<int64_t>(std::floor(-(a.mode == Mode::Cubic ? 2.0 : 1.0) / scale)) + 1;
}
size_t axis_taps(const ResizeAttrs& a, double scale) {
  if (antialiased(a, scale)) return static_cast<size_t>(2 - 2 * antialias_start(a, scale));
  return a.mode == Mode::Nearest ? 1 : a.mode == Mode::Linear ? 2 : 4;
}

// The antialiased filter at coordinate x, normalized to sum 1. As in the spec's reference, the left
// neighbour of an integer x is x - 1 (its weight is then 0 or symmetric), and exclude_outside drops the
// taps outside the input before normalizing.
void antialias_taps(const ResizeAttrs& a, double x, double scale, int64_t in, AxisMap& m) {
  const int64_t start = antialias_start(a, scale);
  const size_t taps = m.taps;
  const int64_t left = static_cast<int64_t>(std::ceil(x)) - 1;
  const double ratio = x - static_cast<double>(left);
  std::vector<double> w(taps);
  double sum = 0;
  for (size_t k = 0; k < taps; ++k) {
    const int64_t offset = start + static_cast<int64_t>(k);
    const double arg = scale * (static_cast<double>(offset) - ratio);
    w[k] = a.mode == Mode::Cubic ? cubic_kernel(arg, a.cubic_a) : std::max(0.0, 1 - std::fabs(arg));
    const int64_t i = left + offset;
    if (a.exclude_outside && (i < 0 || i >= in)) w[k] = 0;
    sum += w[k];
  }
  for (size_t k = 0; k < taps; ++k) {
    m.index.push_back(std::min<int64_t>(std::max<int64_t>(left + start + static_cast<int64_t>(k), 0), in - 1));
    m.weight.push_back(w[k] / sum);
  }
}

AxisMap map_axis(const ResizeAttrs& a, int64_t in, int64_t out, double scale, double roi_start, double roi_end) {
  AxisMap m;
  const bool crop = a.transform == Transform::TfCropAndResize;
  if (in == out && scale == 1.0 && !crop) {
    m.identity = true;  // exact: the interpolation weights are 1 on the same index and 0 elsewhere
    for (int64_t o = 0; o < out; ++o) {
      m.index.push_back(o);
      m.weight.push_back(1);
      m.outside.push_back(0);
    }
    return m;
  }
  m.taps = axis_taps(a, scale);
  auto clamp = [&](int64_t i) { return std::min<int64_t>(std::max<int64_t>(i, 0), in - 1); };
  for (int64_t o = 0; o < out; ++o) {
    double x = to_original(a, static_cast<double>(o), scale, in, out, roi_start, roi_end);
    m.outside.push_back(crop && !(x >= 0 && x <= static_cast<double>(in - 1)));
    // Far outside (or NaN, from a data roi) every tap clamps to the edge anyway; bounding x keeps
    // the integer conversions defined.
    if (!(x >= -4)) x = -4;
    if (x > static_cast<double>(in) + 4) x = static_cast<double>(in) + 4;
    if (antialiased(a, scale)) {
      antialias_taps(a, x, scale, in, m);
      continue;
    }
    if (a.mode == Mode::Nearest) {
      m.index.push_back(clamp(nearest_index(a.rounding, x, scale < 1)));
      m.weight.push_back(1);
      continue;
    }
    const double base = std::floor(x);
    const double t = x - base;
    const int64_t b = static_cast<int64_t>(base);
    if (a.mode == Mode::Linear) {
      m.index.push_back(clamp(b));
      m.index.push_back(clamp(b + 1));
      m.weight.push_back(1 - t);
      m.weight.push_back(t);
      continue;
    }
    double c[4];
    cubic_coefficients(t, a.cubic_a, c);
    if (a.exclude_outside) {
      double sum = 0;
      for (int k = 0; k < 4; ++k) {
        const int64_t i = b - 1 + k;
        if (i < 0 || i >= in) c[k] = 0;
        sum += c[k];
      }
      for (double& v : c) v /= sum;
    }
    for (int k = 0; k < 4; ++k) {
      m.index.push_back(clamp(b - 1 + k));
      m.weight.push_back(c[k]);
    }
  }
  return m;
}

// Copies by element: nearest resizing is a gather, exact for every type.
template <typename T>
void gather_nearest(const T* in, T* out, const Shape& in_shape, const Shape& out_shape, const std::vector<AxisMap>& maps) {
  const size_t rank = out_shape.size();
  std::vector<int64_t> stride(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) stride[d] = stride[d + 1] * in_shape[d + 1];
  const size_t inner = static_cast<size_t>(out_shape[rank - 1]);
  size_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= static_cast<size_t>(out_shape[d]);
  const auto& last = maps[rank - 1].index;
  parallel_for(rows, std::max<size_t>(1, 16384 / std::max<size_t>(inner, 1)), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      size_t rem = r;
      int64_t base = 0;
      for (size_t d = rank - 1; d-- > 0;) {
        const size_t o = rem % static_cast<size_t>(out_shape[d]);
        rem /= static_cast<size_t>(out_shape[d]);
        base += maps[d].index[o] * stride[d];
      }
      T* dst = out + r * inner;
      for (size_t i = 0; i < inner; ++i) dst[i] = in[base + last[i]];
    }
  });
}

// Integer outputs round to nearest and saturate (cubic overshoots the input range).
template <typename T>
T to_output(double v) {
  if constexpr (std::is_integral_v<T>) {
    v = std::nearbyint(v);
    if (!(v >= static_cast<double>(std::numeric_limits<T>::lowest()))) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

// Interpolates in double, axis by axis from the outermost, like the spec's nested 1-d interpolation.
template <typename T>
void interpolate(const T* in, T* out, const Shape& in_shape, const Shape& out_shape, const std::vector<AxisMap>& maps,
                 double extrapolation) {
  const size_t rank = out_shape.size();
  std::vector<int64_t> stride(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) stride[d] = stride[d + 1] * in_shape[d + 1];
  size_t total = 1;
  for (int64_t d : out_shape) total *= static_cast<size_t>(d);
  parallel_for(total, 4096, [&](size_t begin, size_t end) {
    std::vector<size_t> coord(rank);
    for (size_t i = begin; i < end; ++i) {
      size_t rem = i;
      bool outside = false;
      for (size_t d = rank; d-- > 0;) {
        coord[d] = rem % static_cast<size_t>(out_shape[d]);
        rem /= static_cast<size_t>(out_shape[d]);
        outside = outside || maps[d].outside[coord[d]];
      }
      if (outside) {
        out[i] = to_output<T>(extrapolation);
        continue;
      }
      auto value = [&](auto&& self, size_t d, int64_t offset) -> double {
        if (d == rank) return static_cast<double>(in[offset]);
        const AxisMap& m = maps[d];
        const size_t first = coord[d] * m.taps;
        double sum = 0;
        for (size_t k = 0; k < m.taps; ++k) sum += m.weight[first + k] * self(self, d + 1, offset + m.index[first + k] * stride[d]);
        return sum;
      };
      out[i] = to_output<T>(value(value, 0, 0));
    }
  });
}

// The output of one Resize: its shape, the scale of each axis and tf_crop_and_resize's region.
struct ResizeGeometry {
  Shape out_shape;
  std::vector<double> scale;
  std::vector<double> roi_start, roi_end;
};

// The axes scales, sizes and roi refer to: all of them, or opset 18's `axes` (no repeats).
Expected<std::vector<size_t>> resize_axes(const ResizeAttrs& a, size_t rank) {
  std::vector<size_t> axes;
  if (a.axes.empty()) {
    for (size_t d = 0; d < rank; ++d) axes.push_back(d);
    return axes;
  }
  for (int64_t ax : a.axes) {
    REDUCE_ASSIGN(size_t d, normalize_axis(ax, rank));
    for (size_t seen : axes)
      if (seen == d) return make_error("axes has a repeated axis");
    axes.push_back(d);
  }
  return axes;
}

// Output lengths are floor(scale * input length).
Status apply_scales(const std::vector<double>& s, const Shape& in, const std::vector<size_t>& axes, ResizeGeometry& g) {
  if (s.size() != axes.size())
    return make_error("scales has " + std::to_string(s.size()) + " values for " + std::to_string(axes.size()) + " axes");
  for (size_t i = 0; i < axes.size(); ++i) {
    if (!(s[i] > 0) || !std::isfinite(s[i])) return make_error("scales must be positive");
    const double len = s[i] * static_cast<double>(in[axes[i]]);
    if (len > 9.0e15) return make_error("scales give a too large output");
    g.scale[axes[i]] = s[i];
    g.out_shape[axes[i]] = static_cast<int64_t>(std::floor(len));
  }
  return {};
}

// Sizes are taken as they are ("stretch") or give one scale for all axes, the smallest or the largest
// ratio (keep_aspect_ratio_policy), and the lengths are rounded from it.
Status apply_sizes(const ResizeAttrs& a, const Tensor& sizes, const Shape& in, const std::vector<size_t>& axes, ResizeGeometry& g) {
  if (sizes.dtype() != DType::Int64 || sizes.elements() != axes.size())
    return make_error("sizes must be int64 with one value per axis");
  auto sz = sizes.data<int64_t>();
  for (int64_t v : sz)
    if (v < 0) return make_error("sizes must not be negative");
  if (a.keep_aspect == "stretch") {
    for (size_t i = 0; i < axes.size(); ++i) {
      g.out_shape[axes[i]] = sz[i];
      g.scale[axes[i]] = static_cast<double>(sz[i]) / static_cast<double>(in[axes[i]]);
    }
    return {};
  }
  const bool not_larger = a.keep_aspect == "not_larger";
  double sc = not_larger ? INFINITY : 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const double r = static_cast<double>(sz[i]) / static_cast<double>(in[axes[i]]);
    sc = not_larger ? std::min(sc, r) : std::max(sc, r);
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    g.scale[axes[i]] = sc;
    const double len = std::round(sc * static_cast<double>(in[axes[i]]));
    if (!(len < 9.0e15)) return make_error("sizes give a too large output");
    g.out_shape[axes[i]] = static_cast<int64_t>(len);
  }
  return {};
}

// tf_crop_and_resize's roi: the starts of the axes, then their ends, in float or double.
Status apply_roi(const Tensor* roi, const std::vector<size_t>& axes, ResizeGeometry& g) {
  if (!roi) return make_error("tf_crop_and_resize needs roi");
  REDUCE_ASSIGN(Tensor wr, widen(*roi));
  if (wr.elements() != 2 * axes.size()) return make_error("roi must have 2 values per axis");
  const uint64_t e = axes.size();
  for (size_t i = 0; i < axes.size(); ++i) {
    g.roi_start[axes[i]] = wr.dtype() == DType::Double ? wr.data<double>()[i] : wr.data<float>()[i];
    g.roi_end[axes[i]] = wr.dtype() == DType::Double ? wr.data<double>()[i + e] : wr.data<float>()[i + e];
  }
  return {};
}

// An antialiased axis has about 4 / scale taps per output coordinate.
double axis_taps_bound(const ResizeAttrs& a, double scale) { return antialiased(a, scale) ? 4.0 / scale + 2 : 4.0; }

// The axis maps hold output length * taps entries per axis: refused before they are built when
// they would exceed the tensor size limit (summed in double so that a huge output cannot wrap).
Status check_axis_maps_fit(const ResizeAttrs& a, const ResizeGeometry& g) {
  double map_size = 0;
  for (size_t d = 0; d < g.out_shape.size(); ++d) {
    if (g.out_shape[d] == 0) continue;
    if (axis_taps_bound(a, g.scale[d]) > static_cast<double>(max_tensor_bytes()))
      return make_error("scale " + std::to_string(g.scale[d]) + " needs too many filter taps");
    map_size += static_cast<double>(g.out_shape[d]) * static_cast<double>(axis_taps(a, g.scale[d]));
    if (map_size > static_cast<double>(max_tensor_bytes() / 8)) return make_error("output " + shape_to_string(g.out_shape) + " is too large");
  }
  return {};
}

Status gather_by_size(const Tensor& x, Tensor& out, const std::vector<AxisMap>& maps) {
  const Shape& out_shape = out.shape();
  switch (dtype_size(x.dtype())) {
    case 1: gather_nearest(x.data<uint8_t>().data(), out.mutable_data<uint8_t>().data(), x.shape(), out_shape, maps); return {};
    case 2: gather_nearest(x.data<uint16_t>().data(), out.mutable_data<uint16_t>().data(), x.shape(), out_shape, maps); return {};
    case 4: gather_nearest(x.data<uint32_t>().data(), out.mutable_data<uint32_t>().data(), x.shape(), out_shape, maps); return {};
    case 8: gather_nearest(x.data<uint64_t>().data(), out.mutable_data<uint64_t>().data(), x.shape(), out_shape, maps); return {};
    default: return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
  }
}

// Half types are widened to float for the sums and rounded once at the end.
Expected<Tensor> interpolate_widened(const Tensor& x, const Shape& out_shape, const std::vector<AxisMap>& maps, double extrapolation) {
  if (x.dtype() == DType::Bool || x.dtype() == DType::String) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
  REDUCE_ASSIGN(Tensor wx, widen(x));
  REDUCE_ASSIGN(Tensor wout, Tensor::allocate(wx.dtype(), out_shape));
  visit_dtype(wx.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>)
      interpolate<T>(wx.data<T>().data(), wout.mutable_data<T>().data(), x.shape(), out_shape, maps, extrapolation);
  });
  return narrow(wout, x.dtype());
}

class ResizeKernel : public Kernel {
 public:
  explicit ResizeKernel(ResizeAttrs a) : a_(std::move(a)) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const size_t rank = x.rank();
    if (rank == 0) return make_error("input must have at least one dim");
    REDUCE_ASSIGN(ResizeGeometry g, geometry(ctx, x));
    for (size_t d = 0; d < rank; ++d)
      if (x.shape()[d] == 0 && g.out_shape[d] > 0) return make_error("cannot resize an empty axis to a non-empty one");
    REDUCE_TRY(check_axis_maps_fit(a_, g));
    REDUCE_ASSIGN(Tensor* out, ctx.allocate_output(0, x.dtype(), g.out_shape));
    if (out->elements() == 0) return {};
    std::vector<AxisMap> maps;
    for (size_t d = 0; d < rank; ++d) maps.push_back(map_axis(a_, x.shape()[d], g.out_shape[d], g.scale[d], g.roi_start[d], g.roi_end[d]));
    bool gather = a_.mode == Mode::Nearest;
    if (!gather) {
      gather = true;
      for (const auto& m : maps) gather = gather && m.identity;
    }
    if (gather && a_.transform != Transform::TfCropAndResize) return gather_by_size(x, *out, maps);
    REDUCE_ASSIGN(Tensor result, interpolate_widened(x, g.out_shape, maps, a_.extrapolation));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  // Scales (attribute or input) or sizes, and the roi, as the geometry of the output.
  Expected<ResizeGeometry> geometry(const KernelContext& ctx, const Tensor& x) const {
    auto optional = [&](int i) -> const Tensor* {
      if (i < 0 || static_cast<size_t>(i) >= ctx.input_count()) return nullptr;
      const Tensor* t = ctx.input(static_cast<size_t>(i));
      return t && t->elements() > 0 ? t : nullptr;
    };
    const Tensor* scales_t = optional(a_.scales_input);
    const Tensor* sizes_t = optional(a_.sizes_input);
    const size_t rank = x.rank();
    REDUCE_ASSIGN(std::vector<size_t> axes, resize_axes(a_, rank));
    ResizeGeometry g{x.shape(), std::vector<double>(rank, 1.0), std::vector<double>(rank, 0), std::vector<double>(rank, 1)};
    if (!a_.attr_scales.empty() || scales_t) {
      std::vector<double> s;
      if (scales_t) {
        if (scales_t->dtype() != DType::Float) return make_error("scales must be float");
        for (float v : scales_t->data<float>()) s.push_back(v);
      } else {
        for (float v : a_.attr_scales) s.push_back(v);
      }
      if (sizes_t) return make_error("only one of scales and sizes may be given");
      REDUCE_TRY(apply_scales(s, x.shape(), axes, g));
    } else if (sizes_t) {
      REDUCE_TRY(apply_sizes(a_, *sizes_t, x.shape(), axes, g));
    } else {
      return make_error("one of scales and sizes must be given");
    }
    if (a_.transform == Transform::TfCropAndResize) REDUCE_TRY(apply_roi(optional(a_.roi_input), axes, g));
    return g;
  }

  ResizeAttrs a_;
};

Expected<Mode> parse_mode(const std::string& s) {
  if (s == "nearest") return Mode::Nearest;
  if (s == "linear" || s == "bilinear" || s == "trilinear") return Mode::Linear;
  if (s == "cubic" || s == "bicubic") return Mode::Cubic;
  return make_error("unknown mode '" + s + "'");
}

}  // namespace

Expected<KernelPtr> make_resize(const Node& node, int64_t opset) {
  ResizeAttrs a;
  REDUCE_ASSIGN(a.mode, parse_mode(attr_string(node, "mode", "nearest")));
  if (opset < 11) {
    // Opset 10 had no transformation attributes: asymmetric coordinates; nearest floors when
    // upsampling (the spec's examples) and ceils when downsampling (as ONNX Runtime does).
    if (a.mode == Mode::Cubic) return make_error("cubic mode needs opset 11");
    a.transform = Transform::Asymmetric;
    a.rounding = Rounding::Legacy;
    a.scales_input = 1;
    return KernelPtr(new ResizeKernel(std::move(a)));
  }
  a.roi_input = 1;
  a.scales_input = 2;
  a.sizes_input = 3;
  const std::string t = attr_string(node, "coordinate_transformation_mode", "half_pixel");
  if (t == "half_pixel") a.transform = Transform::HalfPixel;
  else if (t == "half_pixel_symmetric" && opset >= 19) a.transform = Transform::HalfPixelSymmetric;
  else if (t == "pytorch_half_pixel") a.transform = Transform::PytorchHalfPixel;
  else if (t == "align_corners") a.transform = Transform::AlignCorners;
  else if (t == "asymmetric") a.transform = Transform::Asymmetric;
  else if (t == "tf_half_pixel_for_nn") a.transform = Transform::TfHalfPixelForNn;
  else if (t == "tf_crop_and_resize") a.transform = Transform::TfCropAndResize;
  else return make_error("unknown coordinate_transformation_mode '" + t + "'");
  const std::string r = attr_string(node, "nearest_mode", "round_prefer_floor");
  if (r == "round_prefer_floor") a.rounding = Rounding::PreferFloor;
  else if (r == "round_prefer_ceil") a.rounding = Rounding::PreferCeil;
  else if (r == "floor") a.rounding = Rounding::Floor;
  else if (r == "ceil") a.rounding = Rounding::Ceil;
  else return make_error("unknown nearest_mode '" + r + "'");
  a.cubic_a = attr_float(node, "cubic_coeff_a", -0.75f);
  a.exclude_outside = attr_int(node, "exclude_outside", 0) != 0;
  a.extrapolation = attr_float(node, "extrapolation_value", 0.0f);
  if (opset >= 18) {
    a.antialias = attr_int(node, "antialias", 0) != 0;
    a.axes = attr_ints(node, "axes");
    a.keep_aspect = attr_string(node, "keep_aspect_ratio_policy", "stretch");
    if (a.keep_aspect != "stretch" && a.keep_aspect != "not_larger" && a.keep_aspect != "not_smaller")
      return make_error("unknown keep_aspect_ratio_policy '" + a.keep_aspect + "'");
  }
  return KernelPtr(new ResizeKernel(std::move(a)));
}

// Upsample: scales as an attribute (opset 7) or an input (opset 9); asymmetric coordinates.
Expected<KernelPtr> make_upsample(const Node& node, int64_t opset) {
  ResizeAttrs a;
  REDUCE_ASSIGN(a.mode, parse_mode(attr_string(node, "mode", "nearest")));
  if (a.mode == Mode::Cubic) return make_error("Upsample supports nearest and linear");
  a.transform = Transform::Asymmetric;
  a.rounding = Rounding::Legacy;
  if (opset < 9) {
    const Attribute* s = node.attribute("scales");
    if (!s || s->floats.empty()) return make_error("scales attribute is required");
    a.attr_scales = s->floats;
  } else {
    a.scales_input = 1;
  }
  return KernelPtr(new ResizeKernel(std::move(a)));
}

}  // namespace reduce::ref
