// The narrow element types (float8, float4, E8M0, int4/uint4, int2/uint2): values, rounding, packing.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/tensor.h"

namespace reduce {

// How a value between two powers of two becomes float8e8m0 (Cast's `round_mode`, opset 25).
enum class E8M0Rounding { Up, Down, Nearest };

// The value of one stored element of a narrow type (dtype_is_small_float or dtype_is_small_int):
// float8/float4/E8M0 bits decoded (NaN where the type has one), int4/int2 and uint4/uint2 as numbers.
double narrow_to_double(DType t, uint8_t stored);

// The float8, float4e2m1 or E8M0 element nearest to `v`, rounding half to even (E8M0: `rounding`).
// Saturating, values beyond the largest finite one (and infinities) become it; otherwise they become
// infinity (E5M2) or NaN (the others). float4e2m1 has neither, so it always saturates, and takes a
// NaN to 0x8 as ONNX does; the FNUZ types have no negative zero and one NaN (0x80).
uint8_t narrow_float_from_double(DType t, double v, bool saturate, E8M0Rounding rounding = E8M0Rounding::Up);

// The stored byte of an int4/uint4/int2/uint2 value: the low bits of `v` (wrapping, as integer Cast
// does), sign-extended for the signed types.
uint8_t narrow_int_from_int64(DType t, int64_t v);
// The least and greatest value of an int4/uint4/int2/uint2.
int64_t narrow_int_min(DType t);
int64_t narrow_int_max(DType t);

// ONNX's packing of 4- and 2-bit types: element i in bits [i % k * bits, ...) of byte i / k, lowest
// bits first, the last byte's unused bits zero. `packed` holds dtype_packed_bytes(t, n) bytes.
void pack_elements(DType t, std::span<const std::byte> unpacked, std::span<std::byte> packed);
// The reverse: one byte per element, int4/int2 sign-extended; `unpacked` holds the element count.
void unpack_elements(DType t, std::span<const std::byte> packed, std::span<std::byte> unpacked);
// A tensor of a packed type from its serialized bytes; the byte count is checked against the shape
// before anything is allocated (a small file cannot declare a huge tensor).
Expected<Tensor> tensor_from_packed(DType t, Shape shape, std::span<const std::byte> packed);
// The serialized (packed) bytes of a tensor of a packed type.
std::string packed_bytes(const Tensor& tensor);

// A copy of `t` whose bytes are valid elements of `to` (one byte each): int4/int2 values must lie in
// their range, uint4/uint2 likewise, float4e2m1 bits below 16; float8 bytes are all valid. For
// reading raw bits stored as int8/uint8 (.npy has no narrow dtypes) as the declared narrow type.
Expected<Tensor> retype_as_narrow(const Tensor& t, DType to);

}  // namespace reduce
