// Conversion of a tensor to another numeric dtype with Cast's semantics; also used by ops that mix types.
#pragma once

#include "core/tensor.h"

namespace reduce::ref {

// A copy of `in` converted to `to`: floats to integers truncate toward zero and saturate (NaN gives 0),
// integers wrap to narrower integers, anything to bool is `!= 0`, float16/bfloat16 round to nearest even
// once (also from double). Strings and other unsupported dtypes are an error.
Expected<Tensor> cast_tensor(const Tensor& in, DType to);

}  // namespace reduce::ref
