// Slicing one index out of an axis and stacking tensors along a new axis: the plumbing of Loop and Scan.
#pragma once

#include <cstring>
#include <vector>

#include "reference/kernel.h"

namespace reduce::ref {

// The sub-tensor at `index` of `axis`, with that axis removed (a copy).
inline Expected<Tensor> take_along(const Tensor& t, size_t axis, int64_t index) {
  if (axis >= t.rank()) return make_error("axis " + std::to_string(axis) + " is out of range for " + shape_to_string(t.shape()));
  if (index < 0 || index >= t.shape()[axis]) return make_error("index out of range");
  Shape shape = t.shape();
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
  REDUCE_ASSIGN(Tensor out, Tensor::allocate(t.dtype(), shape));
  const size_t esize = dtype_size(t.dtype());
  size_t outer = 1, inner = esize;
  for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(t.shape()[d]);
  for (size_t d = axis + 1; d < t.rank(); ++d) inner *= static_cast<size_t>(t.shape()[d]);
  const size_t len = static_cast<size_t>(t.shape()[axis]);
  const std::byte* src = t.bytes().data();
  std::byte* dst = out.mutable_bytes().data();
  for (size_t o = 0; o < outer; ++o) std::memcpy(dst + o * inner, src + (o * len + static_cast<size_t>(index)) * inner, inner);
  return out;
}

// Stacks equally shaped tensors along a new `axis` (0..rank); `parts` must not be empty.
inline Expected<Tensor> stack_along(const std::vector<Tensor>& parts, size_t axis) {
  const Tensor& first = parts.front();
  for (const Tensor& p : parts)
    if (p.dtype() != first.dtype() || p.shape() != first.shape())
      return make_error("iterations produced different shapes " + shape_to_string(first.shape()) + " and " + shape_to_string(p.shape()));
  if (axis > first.rank()) return make_error("axis " + std::to_string(axis) + " is out of range");
  Shape shape = first.shape();
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(axis), static_cast<int64_t>(parts.size()));
  REDUCE_ASSIGN(Tensor out, Tensor::allocate(first.dtype(), shape));
  const size_t esize = dtype_size(first.dtype());
  size_t outer = 1, inner = esize;
  for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(first.shape()[d]);
  for (size_t d = axis; d < first.rank(); ++d) inner *= static_cast<size_t>(first.shape()[d]);
  std::byte* dst = out.mutable_bytes().data();
  for (size_t o = 0; o < outer; ++o)
    for (size_t k = 0; k < parts.size(); ++k)
      std::memcpy(dst + (o * parts.size() + k) * inner, parts[k].bytes().data() + o * inner, inner);
  return out;
}

}  // namespace reduce::ref
