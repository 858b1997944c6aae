// Conversions between half types and float for kernels.
#include "numeric.h"

namespace reduce::ref {

Expected<Tensor> widen(const Tensor& t) {
  if (!is_half(t.dtype())) return t;
  REDUCE_ASSIGN(Tensor f, Tensor::allocate_uninitialized(DType::Float, t.shape()));
  auto in = t.data<uint16_t>();
  auto out = f.mutable_data<float>();
  const bool bf = t.dtype() == DType::BFloat16;
  for (size_t i = 0; i < in.size(); ++i) out[i] = bf ? bfloat16_to_float(in[i]) : half_to_float(in[i]);
  return f;
}

Expected<Tensor> narrow(const Tensor& f, DType target) {
  if (!is_half(target)) return f;
  REDUCE_ASSIGN(Tensor h, Tensor::allocate_uninitialized(target, f.shape()));
  auto in = f.data<float>();
  auto out = h.mutable_data<uint16_t>();
  const bool bf = target == DType::BFloat16;
  for (size_t i = 0; i < in.size(); ++i) out[i] = bf ? float_to_bfloat16(in[i]) : float_to_half(in[i]);
  return h;
}

}  // namespace reduce::ref
