// Element types of tensors, numbered as ONNX's TensorProto.DataType.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace reduce {

enum class DType : int32_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  // The narrow types (docs/core.md, "Narrow element types"): one byte per element in memory;
  // 4- and 2-bit types are packed only in ONNX files (TensorProto), low bits first.
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  UInt4 = 21,
  Int4 = 22,
  Float4E2M1 = 23,
  Float8E8M0 = 24,
  UInt2 = 25,
  Int2 = 26,
};

// The largest ONNX data_type number we know.
inline constexpr int32_t kLastDType = 26;

// Bytes per element in memory; 0 for types we do not store (undefined, string). Every narrow type
// takes one byte: int4/int2 hold the value as int8, uint4/uint2 as uint8, the float8 types their
// bits, float4e2m1 its bits in the low nibble.
size_t dtype_size(DType t);
// Bits per element in ONNX's serialized form: 4 or 2 for the packed types, else 8 * dtype_size.
size_t dtype_bits(DType t);
// True for the types ONNX packs several to a byte (int4, uint4, float4e2m1, int2, uint2).
bool dtype_is_packed(DType t);
// Bytes of `n` elements in ONNX's serialized (packed) form: ceil(n * bits / 8).
uint64_t dtype_packed_bytes(DType t, uint64_t n);
// The float8, float4 and E8M0 types: floats stored as bits in one byte.
bool dtype_is_small_float(DType t);
// int4, uint4, int2, uint2.
bool dtype_is_small_int(DType t);
// Lower-case ONNX name: "float", "float16", "int64", ...
std::string_view dtype_name(DType t);
// The DType for an ONNX data_type number, if we can store it.
std::optional<DType> dtype_from_onnx(int32_t onnx_type);
bool dtype_is_float(DType t);  // float, double, float16, bfloat16 (not the narrow floats)

}  // namespace reduce
