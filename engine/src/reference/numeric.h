// Float16/bfloat16 handling: kernels compute in float and round once per output.
#pragma once

#include "core/half.h"
#include "core/tensor.h"

namespace reduce::ref {

inline bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

// A float copy of a float16/bfloat16 tensor; other tensors are returned unchanged (shared).
Expected<Tensor> widen(const Tensor& t);
// Rounds a float tensor into `target` (float16/bfloat16); unchanged when target is float.
Expected<Tensor> narrow(const Tensor& f, DType target);

}  // namespace reduce::ref
