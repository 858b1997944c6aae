// QuantizeLinear, DequantizeLinear (per tensor, per axis, blocked) and DynamicQuantizeLinear.
#include <cmath>
#include <limits>
#include <type_traits>

#include "../float_values.h"
#include "../kernel.h"
#include "../numeric.h"

namespace reduce::ref {

namespace {

bool is_quantized_type(DType t) {
  return t == DType::Int8 || t == DType::UInt8 || t == DType::Int16 || t == DType::UInt16 || t == DType::Int32;
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

// The zero points as int64 (all zero when omitted); checks they match the scale's shape.
Expected<std::vector<int64_t>> zero_points(const Tensor* zp, const Tensor& scale) {
  if (!zp) return std::vector<int64_t>(scale.elements(), 0);
  if (zp->shape() != scale.shape() && !(zp->elements() == 1 && scale.elements() == 1))
    return make_error("zero point shape " + shape_to_string(zp->shape()) + " differs from scale shape " +
                      shape_to_string(scale.shape()));
  if (!is_quantized_type(zp->dtype())) return make_error("unsupported zero point type " + std::string(dtype_name(zp->dtype())));
  std::vector<int64_t> out;
  visit_dtype(zp->dtype(), [&]<typename T>() {
    for (T v : zp->data<T>()) out.push_back(static_cast<int64_t>(v));
  });
  return out;
}

class QuantizeKernel : public Kernel {
 public:
  QuantizeKernel(int64_t axis, int64_t block_size, bool saturate) : axis_(axis), block_(block_size), saturate_(saturate) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& scale = *ctx.input(1);
    const Tensor* zp = ctx.input(2);
    const DType out_type = zp ? zp->dtype() : DType::UInt8;
    if (!is_quantized_type(out_type) || out_type == DType::Int32)
      return make_error("unsupported output type " + std::string(dtype_name(out_type)));
    REDUCE_ASSIGN(ParamLayout layout, param_layout(x, scale, axis_, block_));
    REDUCE_ASSIGN(auto scales, float_values(scale, "y_scale"));
    REDUCE_ASSIGN(auto zeros, zero_points(zp, scale));
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor* y, ctx.allocate_output(0, out_type, x.shape()));
    // The division happens in the input's precision (float for float and half inputs), as the spec's x / y_scale.
    std::vector<double> q(x.elements());
    switch (wx.dtype()) {
      case DType::Float: {
        auto in = wx.data<float>();
        for (size_t i = 0; i < q.size(); ++i) q[i] = std::rint(in[i] / static_cast<float>(scales[layout.index(i)]));
        break;
      }
      case DType::Double: {
        auto in = wx.data<double>();
        for (size_t i = 0; i < q.size(); ++i) q[i] = std::rint(in[i] / scales[layout.index(i)]);
        break;
      }
      case DType::Int32: {
        auto in = wx.data<int32_t>();
        for (size_t i = 0; i < q.size(); ++i) q[i] = std::rint(static_cast<float>(in[i]) / static_cast<float>(scales[layout.index(i)]));
        break;
      }
      default: return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    }
    visit_dtype(out_type, [&]<typename T>() {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        auto o = y->mutable_data<T>();
        for (size_t i = 0; i < q.size(); ++i) o[i] = round_saturate<T>(q[i] + static_cast<double>(zeros[layout.index(i)]));
      }
    });
    (void)saturate_;  // only float8 outputs (not supported) can choose not to saturate
    return {};
  }

 private:
  int64_t axis_, block_;
  bool saturate_;
};

class DequantizeKernel : public Kernel {
 public:
  DequantizeKernel(int64_t axis, int64_t block_size) : axis_(axis), block_(block_size) {}
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
    const DType out_type = scale.dtype();
    const DType compute_type = out_type == DType::Double ? DType::Double : DType::Float;
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(compute_type, x.shape()));
    visit_dtype(x.dtype(), [&]<typename T>() {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        auto in = x.data<T>();
        for (size_t i = 0; i < in.size(); ++i) {
          const size_t p = layout.index(i);
          const int64_t centered = static_cast<int64_t>(in[i]) - zeros[p];
          if (compute_type == DType::Double) out.mutable_data<double>()[i] = static_cast<double>(centered) * scales[p];
          else out.mutable_data<float>()[i] = static_cast<float>(centered) * static_cast<float>(scales[p]);
        }
      }
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, out_type));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  int64_t axis_, block_;
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

Expected<KernelPtr> make_quantize_linear(const Node& node, int64_t opset) {
  const int64_t block = attr_int(node, "block_size", 0);
  if (block < 0) return make_error("block_size must not be negative");
  if (attr_int(node, "output_dtype", 0) != 0) return make_error("output_dtype is not supported");
  return KernelPtr(new QuantizeKernel(opset >= 13 ? attr_int(node, "axis", 1) : 1, block, attr_int(node, "saturate", 1) != 0));
}

Expected<KernelPtr> make_dequantize_linear(const Node& node, int64_t opset) {
  const int64_t block = attr_int(node, "block_size", 0);
  if (block < 0) return make_error("block_size must not be negative");
  return KernelPtr(new DequantizeKernel(opset >= 13 ? attr_int(node, "axis", 1) : 1, block));
}

Expected<KernelPtr> make_dynamic_quantize_linear(const Node&, int64_t) { return KernelPtr(new DynamicQuantizeKernel()); }

}  // namespace reduce::ref
