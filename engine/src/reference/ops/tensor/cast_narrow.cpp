// Cast to and from the narrow types (cast_narrow_tensor, declared in cast.h): through double or int64.
#include <cmath>
#include <limits>

#include "reference/cast.h"

namespace reduce::ref {

namespace {

bool is_integral(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64: return true;
    default: return dtype_is_small_int(t);
  }
}

// The values of a narrow tensor as int64 (small integers) or double (the narrow floats).
Expected<Tensor> widen_narrow(const Tensor& in) {
  const bool ints = dtype_is_small_int(in.dtype());
  REDUCE_ASSIGN(Tensor out, Tensor::allocate_uninitialized(ints ? DType::Int64 : DType::Double, in.shape()));
  const auto bytes = in.data<uint8_t>();
  if (ints) {
    auto o = out.mutable_data<int64_t>();
    for (size_t i = 0; i < bytes.size(); ++i) o[i] = static_cast<int64_t>(narrow_to_double(in.dtype(), bytes[i]));
  } else {
    auto o = out.mutable_data<double>();
    for (size_t i = 0; i < bytes.size(); ++i) o[i] = narrow_to_double(in.dtype(), bytes[i]);
  }
  return out;
}

// A double truncated toward zero into int64, saturating; NaN gives 0.
int64_t truncate_to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

}  // namespace

Expected<Tensor> cast_narrow_tensor(const Tensor& in, DType to, const CastOptions& options) {
  if (in.dtype() == to) return in;
  if (is_narrow(in.dtype())) {
    REDUCE_ASSIGN(Tensor wide, widen_narrow(in));
    if (!is_narrow(to)) return cast_tensor(wide, to);
    return cast_narrow_tensor(wide, to, options);
  }
  REDUCE_ASSIGN(Tensor out, Tensor::allocate_uninitialized(to, in.shape()));
  auto o = out.mutable_data<uint8_t>();
  if (dtype_is_small_int(to)) {
    if (is_integral(in.dtype())) {
      REDUCE_ASSIGN(Tensor ints, cast_tensor(in, DType::Int64));
      auto v = ints.data<int64_t>();
      for (size_t i = 0; i < o.size(); ++i) o[i] = narrow_int_from_int64(to, v[i]);
    } else {
      REDUCE_ASSIGN(Tensor d, cast_tensor(in, DType::Double));
      auto v = d.data<double>();
      for (size_t i = 0; i < o.size(); ++i) o[i] = narrow_int_from_int64(to, truncate_to_int64(v[i]));
    }
    return out;
  }
  REDUCE_ASSIGN(Tensor d, cast_tensor(in, DType::Double));
  auto v = d.data<double>();
  for (size_t i = 0; i < o.size(); ++i) o[i] = narrow_float_from_double(to, v[i], options.saturate, options.round_mode);
  return out;
}

}  // namespace reduce::ref
