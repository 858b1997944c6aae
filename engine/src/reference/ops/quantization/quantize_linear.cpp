// QuantizeLinear, DequantizeLinear (per tensor, per axis, blocked; integer, float8, float4 and 4-/2-bit
// types) and DynamicQuantizeLinear.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "reference/cast.h"
#include "reference/float_values.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

// The types QuantizeLinear writes and DequantizeLinear reads (int32: DequantizeLinear only).
bool is_quantized_type(DType t) {
  switch (t) {
    case DType::Int8:
    case DType::UInt8:
    case DType::Int16:
    case DType::UInt16:
    case DType::Int32:
    case DType::Int4:
    case DType::UInt4:
    case DType::Int2:
    case DType::UInt2:
    case DType::Float8E4M3FN:
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ:
    case DType::Float4E2M1: return true;
    default: return false;
  }
}

// The range QuantizeLinear saturates an integer type to.
std::pair<double, double> integer_range(DType t) {
  if (dtype_is_small_int(t)) return {static_cast<double>(narrow_int_min(t)), static_cast<double>(narrow_int_max(t))};
  return visit_dtype(t, []<typename T>() {
    return std::pair{static_cast<double>(std::numeric_limits<T>::lowest()), static_cast<double>(std::numeric_limits<T>::max())};
  });
}

// Rounds half to even (the current rounding mode is round-to-nearest) and saturates into T.
template <typename T>
T round_saturate(double v) {
  v = std::rint(v);
  if (std::isnan(v)) return T(0);
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// Every element of a quantized tensor (integers, narrow types) as a double; exact for all of them.
std::vector<double> quantized_values(const Tensor& t) {
  std::vector<double> out(t.elements());
  if (is_narrow(t.dtype())) {
    auto in = t.data<uint8_t>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = narrow_to_double(t.dtype(), in[i]);
    return out;
  }
  visit_dtype(t.dtype(), [&]<typename T>() {
    auto in = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(in[i]);
  });
  return out;
}

// Maps an element of x (viewed as [outer, axis_dim, inner]) to its scale/zero point: one for the
// tensor, one per index of `axis`, or one per block of block_size indices along `axis`.
struct ParamLayout {
  size_t outer = 1, dim = 1, inner = 1, block = 0, params = 1;
  bool per_tensor = true;
  size_t index(size_t i) const {
    if (per_tensor) return 0;
    const size_t a = (i / inner) % dim;
    if (block == 0) return a;
    const size_t o = i / (inner * dim);
    return (o * ((dim + block - 1) / block) + a / block) * inner + i % inner;
  }
};

Expected<ParamLayout> param_layout(const Tensor& x, const Tensor& scale, int64_t axis_attr, int64_t block_size) {
  ParamLayout l;
  if (scale.rank() == 0 || (scale.rank() == 1 && scale.elements() == 1 && block_size == 0)) return l;
  l.per_tensor = false;
  REDUCE_ASSIGN(size_t axis, normalize_axis(axis_attr, x.rank()));
  if (x.rank() == 0) return make_error("a scalar input needs a scalar scale");
  for (size_t d = 0; d < axis; ++d) l.outer *= static_cast<size_t>(x.shape()[d]);
  l.dim = static_cast<size_t>(x.shape()[axis]);
  for (size_t d = axis + 1; d < x.rank(); ++d) l.inner *= static_cast<size_t>(x.shape()[d]);
  if (block_size > 0) {
    l.block = static_cast<size_t>(block_size);
    Shape expected = x.shape();
    expected[axis] = static_cast<int64_t>((l.dim + l.block - 1) / l.block);
    if (scale.shape() != expected)
      return make_error("blocked scale must have shape " + shape_to_string(expected) + ", got " + shape_to_string(scale.shape()));
  } else if (scale.rank() != 1 || scale.elements() != l.dim) {
    return make_error("per-axis scale must have shape [" + std::to_string(l.dim) + "], got " + shape_to_string(scale.shape()));
  }
  l.params = scale.elements();
  return l;
}

// The zero points' values (all zero when omitted); checks they match the scale's shape.
Expected<std::vector<double>> zero_points(const Tensor* zp, const Tensor& scale) {
  if (!zp) return std::vector<double>(scale.elements(), 0.0);
  if (zp->shape() != scale.shape() && !(zp->elements() == 1 && scale.elements() == 1))
    return make_error("zero point shape " + shape_to_string(zp->shape()) + " differs from scale shape " +
                      shape_to_string(scale.shape()));
  if (!is_quantized_type(zp->dtype())) return make_error("unsupported zero point type " + std::string(dtype_name(zp->dtype())));
  return quantized_values(*zp);
}

// x / y_scale for every element, rounded to `precision` (float, double, float16 or bfloat16): the
// precision the spec divides in (y_scale's type unless the `precision` attribute says otherwise).
Expected<std::vector<double>> quotients(const Tensor& x, const std::vector<double>& scales, const ParamLayout& layout,
                                        DType precision) {
  std::vector<double> q(x.elements());
  if (precision == DType::Double) {
    REDUCE_ASSIGN(Tensor xd, cast_tensor(x, DType::Double));
    auto in = xd.data<double>();
    for (size_t i = 0; i < q.size(); ++i) q[i] = in[i] / scales[layout.index(i)];
    return q;
  }
  // The quotient of two floats (or of halves widened to float) rounded to float is the correctly
  // rounded quotient, so rounding it once more to float16/bfloat16 is the division in those types.
  REDUCE_ASSIGN(Tensor xf, cast_tensor(x, DType::Float));
  auto in = xf.data<float>();
  for (size_t i = 0; i < q.size(); ++i) {
    const float narrowed_scale = static_cast<float>(scales[layout.index(i)]);
    const float f = in[i] / narrowed_scale;
    q[i] = precision == DType::Float16    ? half_to_float(float_to_half(f))
           : precision == DType::BFloat16 ? bfloat16_to_float(float_to_bfloat16(f))
                                          : f;
  }
  return q;
}

class QuantizeKernel : public Kernel {
 public:
  QuantizeKernel(int64_t axis, int64_t block_size, bool saturate, DType output_dtype, DType precision)
      : axis_(axis), block_(block_size), saturate_(saturate), output_dtype_(output_dtype), precision_(precision) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& scale = *ctx.input(1);
    const Tensor* zp = ctx.input(2);
    if (zp && output_dtype_ != DType::Undefined && zp->dtype() != output_dtype_)
      return make_error("output_dtype " + std::string(dtype_name(output_dtype_)) + " differs from the zero point's type " +
                        std::string(dtype_name(zp->dtype())));
    const DType out_type = output_dtype_ != DType::Undefined ? output_dtype_ : zp ? zp->dtype() : DType::UInt8;
    if (!is_quantized_type(out_type) || out_type == DType::Int32)
      return make_error("unsupported output type " + std::string(dtype_name(out_type)));
    if (!dtype_is_float(x.dtype()) && x.dtype() != DType::Int32)
      return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    REDUCE_ASSIGN(ParamLayout layout, param_layout(x, scale, axis_, block_));
    REDUCE_ASSIGN(auto scales, float_values(scale, "y_scale"));
    REDUCE_ASSIGN(auto zeros, zero_points(zp, scale));
    const DType precision = precision_ != DType::Undefined ? precision_ : scale.dtype();
    REDUCE_ASSIGN(auto q, quotients(x, scales, layout, precision));
    REDUCE_ASSIGN(Tensor* y, ctx.allocate_output(0, out_type, x.shape()));
    if (dtype_is_small_float(out_type)) {
      // Float outputs take x / y_scale + zero point rounded to the type; float4e2m1 always saturates.
      auto o = y->mutable_data<uint8_t>();
      for (size_t i = 0; i < q.size(); ++i)
        o[i] = narrow_float_from_double(out_type, q[i] + zeros[layout.index(i)], saturate_);
      return {};
    }
    const auto [lo, hi] = integer_range(out_type);
    auto value = [&](size_t i) { return std::clamp(std::rint(q[i]) + zeros[layout.index(i)], lo, hi); };
    if (dtype_is_small_int(out_type)) {
      auto o = y->mutable_data<uint8_t>();
      for (size_t i = 0; i < q.size(); ++i) {
        const double v = value(i);
        o[i] = narrow_int_from_int64(out_type, std::isnan(v) ? 0 : static_cast<int64_t>(v));
      }
      return {};
    }
    visit_dtype(out_type, [&]<typename T>() {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        auto o = y->mutable_data<T>();
        for (size_t i = 0; i < q.size(); ++i) o[i] = round_saturate<T>(value(i));
      }
    });
    return {};
  }

 private:
  int64_t axis_, block_;
  bool saturate_;
  DType output_dtype_, precision_;  // Undefined: from the zero point / y_scale
};

class DequantizeKernel : public Kernel {
 public:
  DequantizeKernel(int64_t axis, int64_t block_size, DType output_dtype)
      : axis_(axis), block_(block_size), output_dtype_(output_dtype) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& scale = *ctx.input(1);
    const Tensor* zp = ctx.input(2);
    if (!is_quantized_type(x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    if (zp && zp->dtype() != x.dtype()) return make_error("zero point type differs from the input type");
    if (!dtype_is_float(scale.dtype())) return make_error("x_scale must be a floating-point tensor");
    REDUCE_ASSIGN(ParamLayout layout, param_layout(x, scale, axis_, block_));
    REDUCE_ASSIGN(auto scales, float_values(scale, "x_scale"));
    REDUCE_ASSIGN(auto zeros, zero_points(zp, scale));
    const DType out_type = output_dtype_ != DType::Undefined ? output_dtype_ : scale.dtype();
    const DType compute_type = out_type == DType::Double || scale.dtype() == DType::Double ? DType::Double : DType::Float;
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(compute_type, x.shape()));
    const std::vector<double> values = quantized_values(x);
    for (size_t i = 0; i < values.size(); ++i) {
      const size_t p = layout.index(i);
      // Integers subtract exactly; the narrow floats subtract in float, as the spec's float(x) - float(zp).
      const double centered = values[i] - zeros[p];
      if (compute_type == DType::Double) out.mutable_data<double>()[i] = centered * scales[p];
      else out.mutable_data<float>()[i] = static_cast<float>(centered) * static_cast<float>(scales[p]);
    }
    REDUCE_ASSIGN(Tensor result, cast_tensor(out, out_type));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  int64_t axis_, block_;
  DType output_dtype_;  // Undefined: x_scale's type
};

// y_scale = (max(0, max x) - min(0, min x)) / 255; y_zero_point = round(-min / scale); y = x / scale + zp.
class DynamicQuantizeKernel : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (x.dtype() != DType::Float) return make_error("input must be float");
    auto in = x.data<float>();
    float lo = 0, hi = 0;
    for (float v : in) {
      if (std::isnan(v)) return make_error("input contains NaN");
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const float scale = (hi - lo) / 255.0f;
    const uint8_t zp = scale == 0 ? 0 : round_saturate<uint8_t>(static_cast<double>(0.0f - lo / scale));
    REDUCE_ASSIGN(Tensor* y, ctx.allocate_output(0, DType::UInt8, x.shape()));
    auto o = y->mutable_data<uint8_t>();
    for (size_t i = 0; i < in.size(); ++i)
      o[i] = scale == 0 ? zp : round_saturate<uint8_t>(std::rint(in[i] / scale) + static_cast<double>(zp));
    if (ctx.output_count() > 1) {
      REDUCE_ASSIGN(Tensor* s, ctx.allocate_output(1, DType::Float, {}));
      s->mutable_data<float>()[0] = scale;
    }
    if (ctx.output_count() > 2) {
      REDUCE_ASSIGN(Tensor* z, ctx.allocate_output(2, DType::UInt8, {}));
      z->mutable_data<uint8_t>()[0] = zp;
    }
    return {};
  }
};

}  // namespace

// An attribute naming an element type (`output_dtype`, `precision`); 0 or absent: Undefined.
Expected<DType> type_attribute(const Node& node, const char* name, bool (*allowed)(DType)) {
  const int64_t v = attr_int(node, name, 0);
  if (v == 0) return DType::Undefined;
  const auto t = v > 0 && v <= kLastDType ? dtype_from_onnx(static_cast<int32_t>(v)) : std::nullopt;
  if (!t || !allowed(*t)) return make_error(std::string(name) + " " + std::to_string(v) + " is not a supported type here");
  return *t;
}

Expected<KernelPtr> make_quantize_linear(const Node& node, int64_t opset) {
  const int64_t block = attr_int(node, "block_size", 0);
  if (block < 0) return make_error("block_size must not be negative");
  REDUCE_ASSIGN(DType output_dtype, type_attribute(node, "output_dtype", is_quantized_type));
  REDUCE_ASSIGN(DType precision, type_attribute(node, "precision", dtype_is_float));
  return KernelPtr(new QuantizeKernel(opset >= 13 ? attr_int(node, "axis", 1) : 1, block, attr_int(node, "saturate", 1) != 0,
                                      output_dtype, precision));
}

Expected<KernelPtr> make_dequantize_linear(const Node& node, int64_t opset) {
  const int64_t block = attr_int(node, "block_size", 0);
  if (block < 0) return make_error("block_size must not be negative");
  REDUCE_ASSIGN(DType output_dtype, type_attribute(node, "output_dtype", dtype_is_float));
  return KernelPtr(new DequantizeKernel(opset >= 13 ? attr_int(node, "axis", 1) : 1, block, output_dtype));
}

Expected<KernelPtr> make_dynamic_quantize_linear(const Node&, int64_t) { return KernelPtr(new DynamicQuantizeKernel()); }

}  // namespace reduce::ref
