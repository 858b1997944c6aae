// Reduced-precision storage: float tensors rounded to the values fp16 or bf16 can hold.
#pragma once

#include "core/tensor.h"
#include "engine/optimized.h"

namespace reduce::opt {

// Rounds every element of a float or double tensor to the nearest value of `precision` (ties to
// even; beyond fp16's range, +-inf). Other dtypes and FP32 are left alone. When some element
// changes, the tensor is rounded in place if `in_place` and it is writable, else in a copy (the
// caller's inputs and shared weights are never written).
// One float rounded to the nearest value of `precision` (the same rounding).
float round_float(float x, Precision precision);

Status round_to_precision(Tensor& t, Precision precision, bool in_place);

}  // namespace reduce::opt
