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
  }
  return "unknown";
}

std::optional<DType> dtype_from_onnx(int32_t onnx_type) {
  if (onnx_type <= 0 || onnx_type > 16) return std::nullopt;
  const auto t = static_cast<DType>(onnx_type);
  if (dtype_size(t) == 0) return std::nullopt;
  return t;
}

bool dtype_is_float(DType t) {
  return t == DType::Float || t == DType::Double || t == DType::Float16 || t == DType::BFloat16;
}

}  // namespace reduce
