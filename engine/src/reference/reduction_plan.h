// Which input elements feed each output of a reduction over a set of axes, in a fixed order.
#pragma once

#include <cstddef>
#include <vector>

#include "core/tensor.h"

namespace reduce::ref {

// Output o reads x[base[o] + offsets[r]] for every r, in ascending input order, so the
// accumulation order never depends on how outputs are split among threads.
struct ReductionPlan {
  Shape out_shape;
  std::vector<size_t> base;     // one per output, row-major over the kept dims
  std::vector<size_t> offsets;  // one per reduced element, row-major over the reduced dims
};

// Row-major offsets of every index of `dims` with the given element strides.
inline std::vector<size_t> enumerate_offsets(const std::vector<size_t>& dims, const std::vector<size_t>& strides) {
  size_t count = 1;
  for (size_t d : dims) count *= d;
  std::vector<size_t> out;
  if (count == 0) return out;
  out.reserve(count);
  std::vector<size_t> idx(dims.size(), 0);
  size_t off = 0;
  for (size_t n = 0; n < count; ++n) {
    out.push_back(off);
    for (size_t d = dims.size(); d-- > 0;) {
      ++idx[d];
      off += strides[d];
      if (idx[d] < dims[d]) break;
      off -= strides[d] * idx[d];
      idx[d] = 0;
    }
  }
  return out;
}

// `reduced[d]` marks the reduced dims of `shape`; keepdims keeps them as 1 in the output shape.
inline ReductionPlan make_reduction_plan(const Shape& shape, const std::vector<bool>& reduced, bool keepdims) {
  const size_t rank = shape.size();
  std::vector<size_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * static_cast<size_t>(shape[d]);
  ReductionPlan plan;
  std::vector<size_t> kd, ks, rd, rs;
  for (size_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      rd.push_back(static_cast<size_t>(shape[d]));
      rs.push_back(strides[d]);
      if (keepdims) plan.out_shape.push_back(1);
    } else {
      kd.push_back(static_cast<size_t>(shape[d]));
      ks.push_back(strides[d]);
      plan.out_shape.push_back(shape[d]);
    }
  }
  plan.base = enumerate_offsets(kd, ks);
  plan.offsets = enumerate_offsets(rd, rs);
  return plan;
}

}  // namespace reduce::ref
