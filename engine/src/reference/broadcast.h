// Multidirectional (numpy) broadcasting, written once for every elementwise kernel.
#pragma once

#include <span>
#include <vector>

#include "core/tensor.h"

namespace reduce::ref {

// The broadcast shape of several shapes, or an error naming the incompatible dims.
Expected<Shape> broadcast_shapes(std::span<const Shape> shapes);

// Element strides of `shape` aligned to the right of `out` (0 where the dim is broadcast).
std::vector<size_t> broadcast_strides(const Shape& shape, const Shape& out);

// Calls fn(out_index, a_index, b_index) for every element of `out`, in order.
template <typename Fn>
void for_each_broadcast2(const Shape& out, const Shape& a, const Shape& b, Fn&& fn) {
  const size_t rank = out.size();
  size_t total = 1;
  for (int64_t d : out) total *= static_cast<size_t>(d);
  if (total == 0) return;
  const auto sa = broadcast_strides(a, out);
  const auto sb = broadcast_strides(b, out);
  if (a == out && b == out) {  // the common case: no broadcasting at all
    for (size_t i = 0; i < total; ++i) fn(i, i, i);
    return;
  }
  std::vector<size_t> idx(rank, 0);
  size_t ia = 0, ib = 0;
  const size_t inner = rank ? static_cast<size_t>(out[rank - 1]) : 1;
  const size_t ias = rank ? sa[rank - 1] : 0, ibs = rank ? sb[rank - 1] : 0;
  for (size_t o = 0; o < total; o += inner) {
    for (size_t k = 0; k < inner; ++k) fn(o + k, ia + k * ias, ib + k * ibs);
    // Advance the outer index (all dims but the last), updating offsets incrementally.
    for (size_t d = rank - 1; d-- > 0;) {
      ++idx[d];
      ia += sa[d];
      ib += sb[d];
      if (idx[d] < static_cast<size_t>(out[d])) break;
      ia -= sa[d] * idx[d];
      ib -= sb[d] * idx[d];
      idx[d] = 0;
    }
  }
}

}  // namespace reduce::ref
