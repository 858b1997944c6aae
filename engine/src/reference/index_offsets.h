// Element offsets named by index tensors, shared by the gather and scatter ops: each index is checked
// (negative ones count from the end) before any offset is used.
#pragma once

#include <span>
#include <vector>

#include "int_input.h"
#include "strided_copy.h"

namespace reduce::ref {

inline int64_t dims_product(std::span<const int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// GatherElements/ScatterElements: the data offset of each element of `indices` (same rank as data, no
// dim larger than data's except along `axis`), its axis coordinate replaced by the index value.
inline Expected<std::vector<size_t>> element_offsets(const Shape& data, const Shape& index_shape,
                                                     const std::vector<int64_t>& indices, size_t axis) {
  if (index_shape.size() != data.size())
    return make_error("indices " + shape_to_string(index_shape) + " and data " + shape_to_string(data) +
                      " must have the same rank");
  for (size_t d = 0; d < data.size(); ++d)
    if (d != axis && index_shape[d] > data[d])
      return make_error("indices " + shape_to_string(index_shape) + " do not fit data " + shape_to_string(data));
  const auto strides = contiguous_strides(data);
  std::vector<size_t> offsets(indices.size());
  std::vector<int64_t> pos(data.size(), 0);
  for (size_t k = 0; k < indices.size(); ++k) {
    REDUCE_ASSIGN(int64_t i, checked_index(indices[k], data[axis]));
    int64_t off = 0;
    for (size_t d = 0; d < data.size(); ++d) off += (d == axis ? i : pos[d]) * strides[d];
    offsets[k] = static_cast<size_t>(off);
    for (size_t d = data.size(); d-- > 0;) {
      if (++pos[d] < index_shape[d]) break;
      pos[d] = 0;
    }
  }
  return offsets;
}

// GatherND/ScatterND: indices has shape batch + tuples + [k]; for each k-tuple, the element offset in
// data of the slice data[batch..., tuple..., :] it names.
inline Expected<std::vector<size_t>> nd_offsets(const Shape& data, const Shape& index_shape,
                                                const std::vector<int64_t>& indices, size_t batch_dims) {
  if (index_shape.empty()) return make_error("indices must have rank at least 1");
  const int64_t k = index_shape.back();
  if (batch_dims >= index_shape.size() || k < 0 || batch_dims + static_cast<size_t>(k) > data.size())
    return make_error("indices " + shape_to_string(index_shape) + " do not fit data " + shape_to_string(data) +
                      " with batch_dims " + std::to_string(batch_dims));
  for (size_t d = 0; d < batch_dims; ++d)
    if (index_shape[d] != data[d])
      return make_error("batch dims of indices " + shape_to_string(index_shape) + " and data " + shape_to_string(data) +
                        " differ");
  const auto strides = contiguous_strides(data);
  const std::span<const int64_t> is(index_shape);
  const size_t tuples = static_cast<size_t>(dims_product(is.first(is.size() - 1)));
  const size_t per_batch = static_cast<size_t>(dims_product(is.subspan(batch_dims, is.size() - 1 - batch_dims)));
  std::vector<size_t> offsets(tuples);
  for (size_t t = 0; t < tuples; ++t) {
    int64_t off = batch_dims ? static_cast<int64_t>(t / per_batch) * strides[batch_dims - 1] : 0;
    for (size_t j = 0; j < static_cast<size_t>(k); ++j) {
      REDUCE_ASSIGN(int64_t i, checked_index(indices[t * static_cast<size_t>(k) + j], data[batch_dims + j]));
      off += i * strides[batch_dims + j];
    }
    offsets[t] = static_cast<size_t>(off);
  }
  return offsets;
}

}  // namespace reduce::ref
