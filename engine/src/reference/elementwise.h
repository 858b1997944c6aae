// Loops and shape rules shared by the elementwise kernels: parallel unary maps, broadcast binary maps.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>

#include "broadcast.h"
#include "kernel.h"
#include "parallel.h"

namespace reduce::ref {

// Elements per parallel chunk: large enough that scheduling is negligible next to the arithmetic.
inline constexpr size_t kElementwiseGrain = size_t{1} << 15;

// Operands of one elementwise op must share a type (ONNX's type constraint T).
inline Status check_same_type(const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype()) return {};
  return make_error("inputs have different types (" + std::string(dtype_name(a.dtype())) + " and " +
                    std::string(dtype_name(b.dtype())) + ")");
}

// out[i] = f(in[i]); `in` and `out` have the same length.
template <typename In, typename Out, typename F>
void map_unary(std::span<const In> in, std::span<Out> out, F f) {
  const In* x = in.data();
  Out* y = out.data();
  parallel_for(in.size(), kElementwiseGrain, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) y[i] = f(x[i]);
  });
}

// out[o] = f(a[i], b[j]) over the broadcast of a_shape and b_shape to out_shape.
template <typename A, typename B, typename R, typename F>
void map_binary(std::span<const A> a, const Shape& a_shape, std::span<const B> b, const Shape& b_shape, std::span<R> out,
                const Shape& out_shape, F f) {
  const BroadcastRuns<2> runs(out_shape, {a_shape, b_shape});
  parallel_for(runs.elements(), kElementwiseGrain, [&](size_t begin, size_t end) {
    runs.for_each_run(begin, end, [&](size_t o, const auto& off, const auto& step, size_t n) {
      const A* x = a.data() + off[0];
      const B* y = b.data() + off[1];
      R* z = out.data() + o;
      if (step[0] && step[1]) {
        for (size_t k = 0; k < n; ++k) z[k] = f(x[k], y[k]);
      } else if (step[0]) {
        const B yv = *y;
        for (size_t k = 0; k < n; ++k) z[k] = f(x[k], yv);
      } else if (step[1]) {
        const A xv = *x;
        for (size_t k = 0; k < n; ++k) z[k] = f(xv, y[k]);
      } else {
        const R v = f(*x, *y);
        for (size_t k = 0; k < n; ++k) z[k] = v;
      }
    });
  });
}

// Before opset 7, binary ops broadcast B to A only when asked (attributes broadcast and axis).
struct LegacyBroadcast {
  bool legacy = false;  // opset < 7
  bool broadcast = false;
  std::optional<int64_t> axis;
};
inline LegacyBroadcast legacy_broadcast(const Node& node, int64_t opset) {
  LegacyBroadcast l;
  if (opset >= 7) return l;
  l.legacy = true;
  l.broadcast = attr_int(node, "broadcast", 0) != 0;
  if (const Attribute* a = node.attribute("axis"); a && a->kind == Attribute::Kind::Int) l.axis = a->i;
  return l;
}

// The output shape of a binary op and B's shape as the loops see it (padded for legacy broadcasting).
struct BinaryShapes {
  Shape out;
  Shape b;
};
inline Expected<BinaryShapes> binary_shapes(const Shape& a, const Shape& b, const LegacyBroadcast& legacy) {
  if (legacy.legacy) {
    REDUCE_ASSIGN(Shape padded, legacy_broadcast_shape(a, b, legacy.broadcast, legacy.axis));
    return BinaryShapes{a, std::move(padded)};
  }
  const Shape shapes[] = {a, b};
  REDUCE_ASSIGN(Shape out, broadcast_shapes(shapes));
  return BinaryShapes{std::move(out), b};
}

// Integer arithmetic that wraps on overflow (two's complement) instead of being undefined.
template <typename T>
T wrap_add(T x, T y) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
}
template <typename T>
T wrap_sub(T x, T y) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(x) - static_cast<U>(y)));
}
template <typename T>
T wrap_mul(T x, T y) {
  using U = std::make_unsigned_t<T>;
  // Promote to at least unsigned int so that uint16 * uint16 does not overflow a signed int.
  using P = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return static_cast<T>(static_cast<U>(static_cast<P>(static_cast<U>(x)) * static_cast<P>(static_cast<U>(y))));
}
// Truncating division; the one overflowing case (min / -1) wraps to min. The divisor must not be 0.
template <typename T>
T wrap_div(T x, T y) {
  if constexpr (std::is_signed_v<T>) {
    if (y == T(-1)) return wrap_sub<T>(T(0), x);
  }
  return static_cast<T>(x / y);
}

// A float or double value converted to integer type T: truncated toward zero, saturated at T's limits,
// NaN giving 0. ONNX leaves out-of-range conversions unspecified; saturation is defined and portable.
template <typename T, typename F>
T saturate_cast(F v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else {
    if (std::isnan(v)) return T(0);
    const double d = static_cast<double>(v);
    // Comparing with the limits as doubles is exact at the low end (a power of two or 0) and at the
    // high end uses max+1, also a power of two, so every in-range value is accepted.
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
    constexpr double hi_excl = static_cast<double>(std::numeric_limits<T>::max() / 2 + 1) * 2.0;
    if (d < lo) return std::numeric_limits<T>::min();
    if (d >= hi_excl) return std::numeric_limits<T>::max();
    return static_cast<T>(d);
  }
}

// Whether all of `values` are non-zero (divisors checked before integer Div and Mod).
template <typename T>
bool all_nonzero(std::span<const T> values) {
  for (T v : values)
    if (v == T(0)) return false;
  return true;
}

}  // namespace reduce::ref
