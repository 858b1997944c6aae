// Leading slices of tensors: the [0, d) corner of each dim, for shape-reduced candidates.
#pragma once

#include "core/tensor.h"

namespace reduce {

// The corner of `t` with shape `shape` (same rank, each dim <= t's). Copies.
Expected<Tensor> leading_slice(const Tensor& t, const Shape& shape);

}  // namespace reduce
