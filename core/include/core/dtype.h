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
};

// Bytes per element; 0 for types we do not store (undefined, string).
size_t dtype_size(DType t);
// Lower-case ONNX name: "float", "float16", "int64", ...
std::string_view dtype_name(DType t);
// The DType for an ONNX data_type number, if we can store it.
std::optional<DType> dtype_from_onnx(int32_t onnx_type);
bool dtype_is_float(DType t);  // float, double, float16, bfloat16

}  // namespace reduce
