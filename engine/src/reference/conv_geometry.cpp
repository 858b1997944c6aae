// Attribute validation and output-size arithmetic of the convolution operators (ONNX Conv/ConvTranspose rules).
#include "conv_geometry.h"

#include "kernel.h"
#include "numeric.h"

namespace reduce::ref {

namespace {

// Attribute values beyond this are refused, so that sizes computed from them cannot overflow int64.
constexpr int64_t kMaxAttr = int64_t{1} << 31;

Status check_range(const std::vector<int64_t>& v, const char* name, int64_t lo) {
  for (int64_t x : v)
    if (x < lo || x > kMaxAttr)
      return make_error(std::string(name) + " value " + std::to_string(x) + " is out of range");
  return {};
}

std::string join(const Shape& s) { return shape_to_string(s); }

// Common checks of x and w and the attribute lengths against the spatial rank.
Status check_common(const ConvAttributes& a, const Shape& x, const Shape& w, size_t& rank) {
  if (x.size() < 3) return make_error("input X must have rank 3 or more, got " + join(x));
  if (w.size() != x.size())
    return make_error("weight W " + join(w) + " must have the rank of input X " + join(x));
  rank = x.size() - 2;
  auto len_ok = [&](const std::vector<int64_t>& v, size_t n, const char* name) -> Status {
    if (!v.empty() && v.size() != n)
      return make_error(std::string(name) + " has " + std::to_string(v.size()) + " values, expected " +
                        std::to_string(n));
    return {};
  };
  REDUCE_TRY(len_ok(a.kernel_shape, rank, "kernel_shape"));
  REDUCE_TRY(len_ok(a.strides, rank, "strides"));
  REDUCE_TRY(len_ok(a.dilations, rank, "dilations"));
  REDUCE_TRY(len_ok(a.pads, 2 * rank, "pads"));
  REDUCE_TRY(len_ok(a.output_padding, rank, "output_padding"));
  for (size_t i = 0; i < rank; ++i) {
    if (w[i + 2] <= 0) return make_error("weight W " + join(w) + " has an empty kernel");
    if (!a.kernel_shape.empty() && a.kernel_shape[i] != w[i + 2])
      return make_error("kernel_shape does not match weight W " + join(w));
  }
  return {};
}

void fill_common(const ConvAttributes& a, size_t rank, const Shape& x, const Shape& w, ConvGeometry& g) {
  g.batch = static_cast<size_t>(x[0]);
  g.in_channels = static_cast<size_t>(x[1]);
  g.group = static_cast<size_t>(a.group);
  for (size_t i = 0; i < rank; ++i) {
    g.in.push_back(static_cast<size_t>(x[i + 2]));
    g.kernel.push_back(static_cast<size_t>(w[i + 2]));
    g.strides.push_back(a.strides.empty() ? 1 : static_cast<size_t>(a.strides[i]));
    g.dilations.push_back(a.dilations.empty() ? 1 : static_cast<size_t>(a.dilations[i]));
  }
}

}  // namespace

Expected<ConvAttributes> parse_conv_attributes(const Node& node, bool transpose) {
  ConvAttributes a;
  const std::string pad = attr_string(node, "auto_pad", "NOTSET");
  if (pad == "NOTSET") a.auto_pad = AutoPad::NotSet;
  else if (pad == "SAME_UPPER") a.auto_pad = AutoPad::SameUpper;
  else if (pad == "SAME_LOWER") a.auto_pad = AutoPad::SameLower;
  else if (pad == "VALID") a.auto_pad = AutoPad::Valid;
  else return make_error("unknown auto_pad '" + pad + "'");
  a.group = attr_int(node, "group", 1);
  if (a.group < 1 || a.group > kMaxAttr) return make_error("group must be positive, got " + std::to_string(a.group));
  a.kernel_shape = attr_ints(node, "kernel_shape");
  a.strides = attr_ints(node, "strides");
  a.dilations = attr_ints(node, "dilations");
  a.pads = attr_ints(node, "pads");
  REDUCE_TRY(check_range(a.kernel_shape, "kernel_shape", 1));
  REDUCE_TRY(check_range(a.strides, "strides", 1));
  REDUCE_TRY(check_range(a.dilations, "dilations", 1));
  REDUCE_TRY(check_range(a.pads, "pads", 0));
  if (a.pads.size() % 2) return make_error("pads must have an even number of values");
  if (transpose) {
    a.output_padding = attr_ints(node, "output_padding");
    a.output_shape = attr_ints(node, "output_shape");
    REDUCE_TRY(check_range(a.output_padding, "output_padding", 0));
    REDUCE_TRY(check_range(a.output_shape, "output_shape", 0));
  }
  return a;
}

size_t ConvGeometry::in_size() const {
  size_t n = 1;
  for (size_t v : in) n *= v;
  return n;
}
size_t ConvGeometry::out_size() const {
  size_t n = 1;
  for (size_t v : out) n *= v;
  return n;
}
size_t ConvGeometry::kernel_size() const {
  size_t n = 1;
  for (size_t v : kernel) n *= v;
  return n;
}
Shape ConvGeometry::output_shape() const {
  Shape s{static_cast<int64_t>(batch), static_cast<int64_t>(out_channels)};
  for (size_t v : out) s.push_back(static_cast<int64_t>(v));
  return s;
}

Expected<ConvGeometry> conv_geometry(const ConvAttributes& a, const Shape& x, const Shape& w) {
  size_t rank = 0;
  REDUCE_TRY(check_common(a, x, w, rank));
  if (w[0] % a.group != 0)
    return make_error("output channels " + std::to_string(w[0]) + " are not divisible by group " +
                      std::to_string(a.group));
  if (w[1] * a.group != x[1])
    return make_error("weight W " + join(w) + " with group " + std::to_string(a.group) +
                      " does not match the channels of input X " + join(x));
  ConvGeometry g;
  fill_common(a, rank, x, w, g);
  g.out_channels = static_cast<size_t>(w[0]);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t in = x[i + 2], s = static_cast<int64_t>(g.strides[i]);
    const int64_t eff = (w[i + 2] - 1) * static_cast<int64_t>(g.dilations[i]) + 1;
    int64_t begin = 0, end = 0, out = 0;
    if (a.auto_pad == AutoPad::SameUpper || a.auto_pad == AutoPad::SameLower) {
      out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + eff - in);
      begin = a.auto_pad == AutoPad::SameUpper ? total / 2 : total - total / 2;
    } else {
      if (a.auto_pad == AutoPad::NotSet && !a.pads.empty()) {
        begin = a.pads[i];
        end = a.pads[i + rank];
      }
      const int64_t span = in + begin + end - eff;
      if (span < 0)
        return make_error("kernel " + join(w) + " is larger than the padded input " + join(x));
      out = span / s + 1;
    }
    g.out.push_back(static_cast<size_t>(out));
    g.pad_begin.push_back(begin);
  }
  return g;
}

Expected<ConvGeometry> conv_transpose_geometry(const ConvAttributes& a, const Shape& x, const Shape& w) {
  size_t rank = 0;
  REDUCE_TRY(check_common(a, x, w, rank));
  if (w[0] != x[1])
    return make_error("weight W " + join(w) + " must have as many rows as input X " + join(x) + " has channels");
  if (x[1] % a.group != 0)
    return make_error("input channels " + std::to_string(x[1]) + " are not divisible by group " +
                      std::to_string(a.group));
  // output_shape may list the spatial dims only, or all dims (older exporters).
  std::vector<int64_t> wanted = a.output_shape;
  if (wanted.size() == rank + 2) wanted.erase(wanted.begin(), wanted.begin() + 2);
  if (!wanted.empty() && wanted.size() != rank)
    return make_error("output_shape has " + std::to_string(a.output_shape.size()) + " values, expected " +
                      std::to_string(rank));
  ConvGeometry g;
  fill_common(a, rank, x, w, g);
  g.out_channels = static_cast<size_t>(w[1] * a.group);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t in = x[i + 2], s = static_cast<int64_t>(g.strides[i]);
    const int64_t eff = (w[i + 2] - 1) * static_cast<int64_t>(g.dilations[i]) + 1;
    const int64_t adj = a.output_padding.empty() ? 0 : a.output_padding[i];
    const int64_t full = s * (in - 1) + adj + eff;  // the output size without any padding
    int64_t begin = 0, out = 0;
    const bool same = a.auto_pad == AutoPad::SameUpper || a.auto_pad == AutoPad::SameLower;
    if (!wanted.empty() || same) {
      out = !wanted.empty() ? wanted[i] : in * s;
      // Padding is derived from the requested size (floor division, as the ONNX reference does, so a
      // larger output than the full one extends at the end).
      const int64_t total = full - out;
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      begin = a.auto_pad == AutoPad::SameUpper ? half : total - half;
    } else {
      int64_t end = 0;
      if (a.auto_pad == AutoPad::NotSet && !a.pads.empty()) {
        begin = a.pads[i];
        end = a.pads[i + rank];
      }
      out = full - begin - end;
    }
    if (out < 0) return make_error("the output size of spatial dimension " + std::to_string(i) + " is negative");
    g.out.push_back(static_cast<size_t>(out));
    g.pad_begin.push_back(begin);
  }
  return g;
}

Expected<ConvProblem> float_conv_problem(const ConvAttributes& attrs, const Tensor& x, const Tensor& w,
                                         const Tensor* b, bool transpose) {
  if (!dtype_is_float(x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
  if (w.dtype() != x.dtype() || (b && b->dtype() != x.dtype()))
    return make_error("inputs X, W and B must have the same type");
  ConvProblem p;
  REDUCE_ASSIGN(p.geometry, transpose ? conv_transpose_geometry(attrs, x.shape(), w.shape())
                                      : conv_geometry(attrs, x.shape(), w.shape()));
  const size_t out_channels = p.geometry.out_channels;
  if (b && (b->rank() != 1 || static_cast<size_t>(b->shape()[0]) != out_channels))
    return make_error("bias B must have shape [" + std::to_string(out_channels) + "], got " + shape_to_string(b->shape()));
  REDUCE_ASSIGN(p.ops.x, widen(x));
  REDUCE_ASSIGN(p.ops.w, widen(w));
  if (b) {
    REDUCE_ASSIGN(p.ops.b, widen(*b));
  }
  return p;
}

}  // namespace reduce::ref
