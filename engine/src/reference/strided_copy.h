// Strided copy: the one loop that moves elements between N-d layouts (Transpose, Slice, Concat, Split,
// Expand, Tile, DepthToSpace). Ops describe what they move as a shape plus element strides of the
// destination and the source (negative for reversed axes, zero for broadcast axes); this file makes it fast.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "parallel.h"

namespace reduce::ref {

// Row-major element strides of `shape`. A tensor with elements has strides below its (bounded)
// element count; an empty one may have dims whose product overflows ([0, 2^62, 2^62]): those
// strides wrap (unsigned arithmetic, defined) and address nothing, since no element is visited.
inline std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    s[d - 1] = static_cast<int64_t>(static_cast<uint64_t>(s[d]) * static_cast<uint64_t>(shape[d]));
  return s;
}

// Runs `fn.template operator()<T>()` with T a trivially copyable type of exactly `elem_size` bytes, so
// dtype-agnostic ops move elements with one typed load/store instead of a memcpy call each.
struct Bytes16 {
  uint64_t lo, hi;
};
template <typename Fn>
decltype(auto) visit_element_size(size_t elem_size, Fn&& fn) {
  switch (elem_size) {
    case 1: return fn.template operator()<uint8_t>();
    case 2: return fn.template operator()<uint16_t>();
    case 4: return fn.template operator()<uint32_t>();
    case 16: return fn.template operator()<Bytes16>();
    default: return fn.template operator()<uint64_t>();
  }
}

namespace strided_detail {

struct Plan {
  std::vector<int64_t> shape, dst, src;  // outermost first
};

// Drops size-1 dims and merges neighbours that are contiguous in both layouts: fewer, longer loops.
inline Plan simplify(const Shape& shape, const std::vector<int64_t>& dst, const std::vector<int64_t>& src) {
  Plan p;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!p.shape.empty() && p.dst.back() == dst[d] * shape[d] && p.src.back() == src[d] * shape[d]) {
      p.shape.back() *= shape[d];
      p.dst.back() = dst[d];
      p.src.back() = src[d];
      continue;
    }
    p.shape.push_back(shape[d]);
    p.dst.push_back(dst[d]);
    p.src.push_back(src[d]);
  }
  return p;
}

// Offsets of the first element of outer row `row` (all dims but `skip` ones counted from the end).
inline std::pair<int64_t, int64_t> row_offsets(const Plan& p, size_t outer_rank, size_t row) {
  int64_t od = 0, os = 0;
  for (size_t d = outer_rank; d-- > 0;) {
    const int64_t i = static_cast<int64_t>(row % static_cast<size_t>(p.shape[d]));
    row /= static_cast<size_t>(p.shape[d]);
    od += i * p.dst[d];
    os += i * p.src[d];
  }
  return {od, os};
}

template <typename T>
void copy_rows(T* dst, const T* src, const Plan& p, size_t begin, size_t end) {
  const size_t outer_rank = p.shape.size() - 1;
  const int64_t n = p.shape.back(), ds = p.dst.back(), ss = p.src.back();
  for (size_t row = begin; row < end; ++row) {
    auto [od, os] = row_offsets(p, outer_rank, row);
    T* d = dst + od;
    const T* s = src + os;
    if (ds == 1 && ss == 1) std::memcpy(d, s, static_cast<size_t>(n) * sizeof(T));
    else if (ds == 1 && ss == 0) std::fill(d, d + n, *s);
    else
      for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
  }
}

// Transposes whose innermost destination axis is strided in the source: copy in square tiles of the
// (k, last) plane, where k is the axis contiguous in the source, so both sides stay in cache.
template <typename T>
bool copy_tiled(T* dst, const T* src, const Plan& p) {
  const size_t rank = p.shape.size();
  if (rank < 2 || p.dst.back() != 1 || p.src.back() == 1) return false;
  size_t k = rank;
  for (size_t d = 0; d + 1 < rank; ++d)
    if (p.src[d] == 1) k = d;
  if (k == rank || p.shape[k] < 16 || p.shape.back() < 16) return false;
  constexpr int64_t kTile = 32;
  Plan outer;  // every dim but k and the last
  for (size_t d = 0; d + 1 < rank; ++d)
    if (d != k) {
      outer.shape.push_back(p.shape[d]);
      outer.dst.push_back(p.dst[d]);
      outer.src.push_back(p.src[d]);
    }
  size_t outer_count = 1;
  for (int64_t e : outer.shape) outer_count *= static_cast<size_t>(e);
  const int64_t nk = p.shape[k], nl = p.shape.back();
  const int64_t dk = p.dst[k], sl = p.src.back();
  const size_t k_tiles = static_cast<size_t>((nk + kTile - 1) / kTile);
  const size_t grain = std::max<size_t>(1, (size_t{1} << 16) / static_cast<size_t>(kTile * nl));
  parallel_for(outer_count * k_tiles, grain, [&](size_t begin, size_t end) {
    for (size_t job = begin; job < end; ++job) {
      auto [od, os] = row_offsets(outer, outer.shape.size(), job / k_tiles);
      const int64_t k0 = static_cast<int64_t>(job % k_tiles) * kTile, k1 = std::min(nk, k0 + kTile);
      for (int64_t l0 = 0; l0 < nl; l0 += kTile) {
        const int64_t l1 = std::min(nl, l0 + kTile);
        for (int64_t i = k0; i < k1; ++i) {
          T* d = dst + od + i * dk;
          const T* s = src + os + i;
          for (int64_t j = l0; j < l1; ++j) d[j] = s[j * sl];
        }
      }
    }
  });
  return true;
}

}  // namespace strided_detail

// dst[Σ i_d·dst_strides[d]] = src[Σ i_d·src_strides[d]] for every index i of `shape`; strides are in
// elements and may be negative (src) or zero (src, broadcast). Every destination element is written by
// exactly one chunk, so the result does not depend on the thread count.
inline void strided_copy(std::byte* dst, const std::byte* src, size_t elem_size, const Shape& shape,
                         const std::vector<int64_t>& dst_strides, const std::vector<int64_t>& src_strides) {
  for (int64_t e : shape)
    if (e == 0) return;
  strided_detail::Plan p = strided_detail::simplify(shape, dst_strides, src_strides);
  if (p.shape.empty()) {
    std::memcpy(dst, src, elem_size);
    return;
  }
  visit_element_size(elem_size, [&]<typename T>() {
    T* d = reinterpret_cast<T*>(dst);
    const T* s = reinterpret_cast<const T*>(src);
    if (strided_detail::copy_tiled(d, s, p)) return;
    size_t rows = 1;
    for (size_t i = 0; i + 1 < p.shape.size(); ++i) rows *= static_cast<size_t>(p.shape[i]);
    const size_t grain = std::max<size_t>(1, (size_t{1} << 16) / static_cast<size_t>(p.shape.back()));
    parallel_for(rows, grain, [&](size_t begin, size_t end) { strided_detail::copy_rows(d, s, p, begin, end); });
  });
}

// Copies all of `src` into `dst` (same dtype) where dst's layout is `dst_strides` starting at `dst_offset`.
inline void copy_into(Tensor& dst, int64_t dst_offset, const std::vector<int64_t>& dst_strides, const Tensor& src) {
  const size_t es = dtype_size(src.dtype());
  strided_copy(dst.mutable_bytes().data() + dst_offset * static_cast<int64_t>(es), src.bytes().data(), es,
               src.shape(), dst_strides, contiguous_strides(src.shape()));
}

}  // namespace reduce::ref
