// Conversion of a tensor to another numeric dtype with Cast's semantics; also used by ops that mix types.
#pragma once

#include "core/narrow_types.h"
#include "core/tensor.h"

namespace reduce::ref {

// Cast's attributes for the narrow float types (opset 19+ `saturate`, opset 25+ `round_mode`).
struct CastOptions {
  bool saturate = true;
  E8M0Rounding round_mode = E8M0Rounding::Up;
};

// A copy of `in` converted to `to`: floats to integers truncate toward zero and saturate (NaN gives 0),
// integers wrap to narrower integers, anything to bool is `!= 0`, float16/bfloat16 round to nearest even
// once (also from double). Strings and other unsupported dtypes are an error. The narrow types: see
// cast_narrow_tensor.
Expected<Tensor> cast_tensor(const Tensor& in, DType to, const CastOptions& options = {});

// Cast from or to a narrow type (float8, float4e2m1, E8M0, int4/uint4, int2/uint2). Values go through
// double (integers through int64): to the narrow floats they round half to even and saturate or not as
// `options` says (narrow_float_from_double); to int4/int2/uint4/uint2 they truncate toward zero and
// keep their low bits, as ONNX's node tests expect (9.0 to int4 is -7).
Expected<Tensor> cast_narrow_tensor(const Tensor& in, DType to, const CastOptions& options);

inline bool is_narrow(DType t) { return dtype_is_small_float(t) || dtype_is_small_int(t); }

}  // namespace reduce::ref
