// Reads a small floating-point parameter tensor (scale, bias, mean, variance) as doubles.
#pragma once

#include <string>
#include <vector>

#include "core/half.h"
#include "core/tensor.h"

namespace reduce::ref {

// The elements of a float, double, float16 or bfloat16 tensor, widened to double.
inline Expected<std::vector<double>> float_values(const Tensor& t, const std::string& what) {
  std::vector<double> out;
  out.reserve(t.elements());
  switch (t.dtype()) {
    case DType::Float: for (float v : t.data<float>()) out.push_back(v); break;
    case DType::Double: for (double v : t.data<double>()) out.push_back(v); break;
    case DType::Float16: for (uint16_t v : t.data<uint16_t>()) out.push_back(half_to_float(v)); break;
    case DType::BFloat16: for (uint16_t v : t.data<uint16_t>()) out.push_back(bfloat16_to_float(v)); break;
    default: return make_error(what + " must be a floating-point tensor, got " + std::string(dtype_name(t.dtype())));
  }
  return out;
}

}  // namespace reduce::ref
