// Reads a small floating-point parameter tensor (scale, bias, mean, variance) as doubles.
#pragma once

#include <algorithm>
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

// A tensor of `dtype` (float, double, float16 or bfloat16) holding `values`, each rounded once
// (through float for the half types, as the kernels that compute in float do).
inline Expected<Tensor> tensor_from_doubles(DType dtype, Shape shape, const std::vector<double>& values) {
  REDUCE_ASSIGN(Tensor t, Tensor::allocate_uninitialized(dtype, std::move(shape)));
  if (t.elements() != values.size()) return make_error("internal: value count does not match the shape");
  switch (dtype) {
    case DType::Float: {
      auto d = t.mutable_data<float>();
      for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<float>(values[i]);
      break;
    }
    case DType::Double: std::copy(values.begin(), values.end(), t.mutable_data<double>().begin()); break;
    case DType::Float16:
    case DType::BFloat16: {
      auto d = t.mutable_data<uint16_t>();
      for (size_t i = 0; i < d.size(); ++i) {
        const float f = static_cast<float>(values[i]);
        d[i] = dtype == DType::Float16 ? float_to_half(f) : float_to_bfloat16(f);
      }
      break;
    }
    default: return make_error("cannot store floating-point results as " + std::string(dtype_name(dtype)));
  }
  return t;
}

}  // namespace reduce::ref
