// Integer inputs that steer an op (shapes, axes, pads, repeats, indices given as int32 or int64).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace reduce::ref {

// The values of an int32/int64 tensor as int64, or an error naming `what`.
inline Expected<std::vector<int64_t>> int_values(const Tensor& t, const std::string& what) {
  if (t.dtype() == DType::Int64) {
    auto d = t.data<int64_t>();
    return std::vector<int64_t>(d.begin(), d.end());
  }
  if (t.dtype() == DType::Int32) {
    auto d = t.data<int32_t>();
    return std::vector<int64_t>(d.begin(), d.end());
  }
  return make_error(what + " must be int32 or int64, got " + std::string(dtype_name(t.dtype())));
}

// A scalar (or one-element) int32/int64 input.
inline Expected<int64_t> int_scalar(const Tensor& t, const std::string& what) {
  REDUCE_ASSIGN(auto v, int_values(t, what));
  if (v.size() != 1) return make_error(what + " must have one element, got shape " + shape_to_string(t.shape()));
  return v[0];
}

// The element index of `i` along an axis of size `dim`, accepting negative indices; error when outside.
inline Expected<int64_t> checked_index(int64_t i, int64_t dim) {
  if (i < -dim || i >= dim)
    return make_error("index " + std::to_string(i) + " is out of range for a dimension of size " + std::to_string(dim));
  return i < 0 ? i + dim : i;
}

}  // namespace reduce::ref
