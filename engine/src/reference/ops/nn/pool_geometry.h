// Window geometry shared by the pooling operators: attributes, padding and output size per spatial axis.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "reference/kernel.h"

namespace reduce::ref {

// The attributes every windowed pooling op takes (AveragePool, MaxPool, LpPool, MaxUnpool).
struct PoolAttributes {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;    // empty: all 1
  std::vector<int64_t> dilations;  // empty: all 1
  std::vector<int64_t> pads;       // [begin..., end...]; empty: all 0
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;
};

inline int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
inline int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// One spatial axis of a pooling window. Output position o reads taps j = 0..kernel-1 at input
// coordinate o*stride - pad_begin + j*dilation; computed on the fly, so no per-position tables.
struct PoolAxis {
  int64_t in = 0, out = 0, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;

  // The first tap inside the input: its coordinate, and how many taps (dilation apart) are inside.
  int64_t first_tap(int64_t o) const { return std::max<int64_t>(0, ceil_div(pad_begin - o * stride, dilation)); }
  int64_t first(int64_t o) const { return o * stride - pad_begin + first_tap(o) * dilation; }
  int64_t count(int64_t o) const {
    const int64_t hi = std::min<int64_t>(kernel - 1, floor_div(in - 1 + pad_begin - o * stride, dilation));
    return std::max<int64_t>(0, hi - first_tap(o) + 1);
  }
  // Taps inside the padded extent [-pad_begin, in + pad_end) (the divisor of count_include_pad).
  int64_t padded(int64_t o) const {
    return std::clamp<int64_t>(floor_div(in + pad_end + pad_begin - o * stride - 1, dilation) + 1, 0, kernel);
  }
};
// More output positions on one axis than any tensor we agree to allocate could hold.
constexpr int64_t max_pool_outputs = int64_t{1} << 34;

// Reads and validates the pooling attributes of a node.
inline Expected<PoolAttributes> read_pool_attributes(const Node& node, bool allow_dilations, bool allow_ceil) {
  PoolAttributes a;
  a.kernel = attr_ints(node, "kernel_shape");
  if (a.kernel.empty()) return make_error("kernel_shape is required");
  const size_t n = a.kernel.size();
  if (n > 8) return make_error("at most 8 spatial axes are supported");
  for (int64_t k : a.kernel)
    if (k <= 0) return make_error("kernel_shape values must be positive");
  a.strides = attr_ints(node, "strides");
  a.dilations = allow_dilations ? attr_ints(node, "dilations") : std::vector<int64_t>{};
  a.pads = attr_ints(node, "pads");
  a.auto_pad = attr_string(node, "auto_pad", "NOTSET");
  a.ceil_mode = allow_ceil && attr_int(node, "ceil_mode", 0) != 0;
  if (a.strides.empty()) a.strides.assign(n, 1);
  if (a.dilations.empty()) a.dilations.assign(n, 1);
  if (a.pads.empty()) a.pads.assign(2 * n, 0);
  if (a.strides.size() != n || a.dilations.size() != n || a.pads.size() != 2 * n)
    return make_error("strides, dilations and pads must match kernel_shape's rank");
  for (size_t i = 0; i < n; ++i) {
    if (a.strides[i] <= 0 || a.dilations[i] <= 0) return make_error("strides and dilations must be positive");
    if (a.pads[i] < 0 || a.pads[i + n] < 0) return make_error("pads must not be negative");
    if (a.kernel[i] > (int64_t{1} << 30) || a.strides[i] > (int64_t{1} << 30) || a.dilations[i] > (int64_t{1} << 30) ||
        a.pads[i] > (int64_t{1} << 30) || a.pads[i + n] > (int64_t{1} << 30))
      return make_error("kernel_shape, strides, dilations or pads value too large");
  }
  if (a.auto_pad != "NOTSET" && a.auto_pad != "VALID" && a.auto_pad != "SAME_UPPER" && a.auto_pad != "SAME_LOWER")
    return make_error("unknown auto_pad '" + a.auto_pad + "'");
  return a;
}

// The window geometry of every spatial axis of `input` (N, C, spatial...).
inline Expected<std::vector<PoolAxis>> pool_axes(const PoolAttributes& a, const Shape& input) {
  const size_t n = a.kernel.size();
  if (input.size() != n + 2)
    return make_error("input " + shape_to_string(input) + " does not match a " + std::to_string(n) + "-d kernel");
  std::vector<PoolAxis> axes(n);
  for (size_t d = 0; d < n; ++d) {
    const int64_t in = input[d + 2], k = a.kernel[d], s = a.strides[d], dil = a.dilations[d];
    const int64_t span = (k - 1) * dil + 1;
    int64_t pb = a.pads[d], pe = a.pads[d + n], out = 0;
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + span - in);
      pb = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else {
      if (a.auto_pad == "VALID") pb = pe = 0;
      const int64_t room = in + pb + pe - span;
      if (room < 0)
        return make_error("kernel (extent " + std::to_string(span) + ") is larger than the padded input " +
                          shape_to_string(input));
      out = (a.ceil_mode ? (room + s - 1) / s : room / s) + 1;
      // A window that starts inside the end padding is dropped (as in PyTorch and ONNX Runtime).
      if (a.ceil_mode && out > 1 && (out - 1) * s >= in + pb) --out;
    }
    if (out > max_pool_outputs) return make_error("pooling output of " + std::to_string(out) + " positions is too large");
    axes[d] = PoolAxis{in, out, k, s, dil, pb, pe};
  }
  return axes;
}

}  // namespace reduce::ref
