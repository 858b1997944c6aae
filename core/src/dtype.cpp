// Sizes, names and ONNX numbering of element types.
#include "core/dtype.h"

namespace reduce {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float: return 4;
    case DType::UInt8: return 1;
    case DType::Int8: return 1;
    case DType::UInt16: return 2;
    case DType::Int16: return 2;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
    case DType::Float16: return 2;
    case DType::Double: return 8;
    case DType::UInt32: return 4;
    case DType::UInt64: return 8;
    case DType::Complex64: return 8;
    case DType::Complex128: return 16;
    case DType::BFloat16: return 2;
    case DType::Float8E4M3FN:
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ:
    case DType::UInt4:
    case DType::Int4:
    case DType::Float4E2M1:
    case DType::Float8E8M0:
    case DType::UInt2:
    case DType::Int2: return 1;
    case DType::String:
    case DType::Undefined: return 0;
  }
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::Undefined: return "undefined";
    case DType::Float: return "float";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::UInt16: return "uint16";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::String: return "string";
    case DType::Bool: return "bool";
    case DType::Float16: return "float16";
    case DType::Double: return "double";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
    case DType::BFloat16: return "bfloat16";
    case DType::Float8E4M3FN: return "float8e4m3fn";
    case DType::Float8E4M3FNUZ: return "float8e4m3fnuz";
    case DType::Float8E5M2: return "float8e5m2";
    case DType::Float8E5M2FNUZ: return "float8e5m2fnuz";
    case DType::UInt4: return "uint4";
    case DType::Int4: return "int4";
    case DType::Float4E2M1: return "float4e2m1";
    case DType::Float8E8M0: return "float8e8m0";
    case DType::UInt2: return "uint2";
    case DType::Int2: return "int2";
  }
  return "unknown";
}

std::optional<DType> dtype_from_onnx(int32_t onnx_type) {
  if (onnx_type <= 0 || onnx_type > kLastDType) return std::nullopt;
  const auto t = static_cast<DType>(onnx_type);
  if (dtype_size(t) == 0) return std::nullopt;
  return t;
}

size_t dtype_bits(DType t) {
  switch (t) {
    case DType::UInt4:
    case DType::Int4:
    case DType::Float4E2M1: return 4;
    case DType::UInt2:
    case DType::Int2: return 2;
    default: return 8 * dtype_size(t);
  }
}

bool dtype_is_packed(DType t) { return dtype_bits(t) > 0 && dtype_bits(t) < 8; }

uint64_t dtype_packed_bytes(DType t, uint64_t n) {
  const uint64_t bits = dtype_bits(t);
  if (bits >= 8) return n * (bits / 8);
  const uint64_t per_byte = 8 / bits;
  return n / per_byte + (n % per_byte != 0);
}

bool dtype_is_small_float(DType t) {
  return t == DType::Float8E4M3FN || t == DType::Float8E4M3FNUZ || t == DType::Float8E5M2 ||
         t == DType::Float8E5M2FNUZ || t == DType::Float4E2M1 || t == DType::Float8E8M0;
}

bool dtype_is_small_int(DType t) {
  return t == DType::UInt4 || t == DType::Int4 || t == DType::UInt2 || t == DType::Int2;
}

bool dtype_is_float(DType t) {
  return t == DType::Float || t == DType::Double || t == DType::Float16 || t == DType::BFloat16;
}

}  // namespace reduce
