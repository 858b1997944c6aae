// Rounding float storage to fp16/bf16 with the exact conversions of core/half.h.
#include "rounding.h"

#include "core/half.h"

namespace reduce::opt {

float round_float(float x, Precision p) {
  if (p == Precision::FP32) return x;
  return p == Precision::FP16 ? half_to_float(float_to_half(x)) : bfloat16_to_float(float_to_bfloat16(x));
}

namespace {

template <typename T>
Status round_elements(Tensor& t, Precision p, bool in_place) {
  auto in = t.data<T>();
  size_t first = 0;
  // Skip the prefix that is already representable (weights rounded once stay shared).
  while (first < in.size() && static_cast<T>(round_float(static_cast<float>(in[first]), p)) == in[first]) ++first;
  if (first == in.size()) return {};
  if (!t.writable() || !in_place) {
    REDUCE_ASSIGN(t, Tensor::copy_of(t.dtype(), t.shape(), t.bytes()));
  }
  auto out = t.mutable_data<T>();
  for (size_t i = first; i < out.size(); ++i) out[i] = static_cast<T>(round_float(static_cast<float>(out[i]), p));
  return {};
}

}  // namespace

Status round_to_precision(Tensor& t, Precision precision, bool in_place) {
  if (precision == Precision::FP32) return {};
  if (t.dtype() == DType::Float) return round_elements<float>(t, precision, in_place);
  if (t.dtype() == DType::Double) return round_elements<double>(t, precision, in_place);
  return {};
}

}  // namespace reduce::opt
