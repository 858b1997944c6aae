// Cast and CastLike between numeric dtypes and bool (cast_tensor, declared in cast.h); strings are refused.
// BitCast reinterprets the bytes of one dtype as another of the same width.
#include "reference/cast.h"

#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "reference/elementwise.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

// double -> float rounding to odd: truncate, then set the last bit if anything was dropped. A second
// rounding of such a float to a type with at most 22 significant bits (float16, bfloat16) then equals a
// single correct rounding of the double, avoiding double-rounding errors.
float to_float_round_to_odd(double d) {
  if (!std::isfinite(d)) return static_cast<float>(d);
  if (std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max()))
    return std::copysign(std::numeric_limits<float>::infinity(), static_cast<float>(d));
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

// The stored element type used to read and write a dtype (bools as bytes, halves as their bits).
template <typename T>
using Stored = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

template <typename S, typename D>
void convert_values(std::span<const Stored<S>> in, std::span<Stored<D>> out) {
  map_unary(in, out, [](Stored<S> raw) -> Stored<D> {
    if constexpr (std::is_same_v<S, bool>) {
      return static_cast<Stored<D>>(raw != 0 ? 1 : 0);
    } else if constexpr (std::is_same_v<D, bool>) {
      return raw != 0 ? 1 : 0;  // NaN is true
    } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
      return saturate_cast<D>(raw);
    } else {
      return static_cast<D>(raw);
    }
  });
}

// Any numeric tensor to float16/bfloat16: through double and a round-to-odd float, rounded once.
Expected<Tensor> cast_to_half(const Tensor& in, DType to) {
  REDUCE_ASSIGN(Tensor wide, widen(in));
  REDUCE_ASSIGN(Tensor d, cast_tensor(wide, DType::Double));
  REDUCE_ASSIGN(Tensor out, Tensor::allocate(to, in.shape()));
  const bool bf = to == DType::BFloat16;
  map_unary(d.data<double>(), out.mutable_data<uint16_t>(), [bf](double v) {
    const float f = to_float_round_to_odd(v);
    return bf ? float_to_bfloat16(f) : float_to_half(f);
  });
  return out;
}

bool castable(DType t) {
  return dtype_size(t) > 0 && t != DType::String && t != DType::Complex64 && t != DType::Complex128;
}

}  // namespace

Expected<Tensor> cast_tensor(const Tensor& in, DType to, const CastOptions& options) {
  if (!castable(in.dtype()) || !castable(to))
    return make_error("cannot cast " + std::string(dtype_name(in.dtype())) + " to " + std::string(dtype_name(to)));
  if (in.dtype() == to) return in;
  if (is_narrow(in.dtype()) || is_narrow(to)) return cast_narrow_tensor(in, to, options);
  if (is_half(to)) return cast_to_half(in, to);
  REDUCE_ASSIGN(Tensor src, widen(in));
  REDUCE_ASSIGN(Tensor out, Tensor::allocate(to, in.shape()));
  visit_dtype(src.dtype(), [&]<typename S>() {
    visit_dtype(to, [&]<typename D>() {
      convert_values<S, D>(src.data<Stored<S>>(), out.mutable_data<Stored<D>>());
    });
  });
  return out;
}

namespace {

class CastKernel : public Kernel {
 public:
  // to: the target dtype, or nullopt for CastLike (the dtype of input 1).
  CastKernel(std::optional<DType> to, CastOptions options) : to_(to), options_(options) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    DType to;
    if (to_) {
      to = *to_;
    } else {
      const Tensor* like = ctx.input(1);
      if (!like) return make_error("CastLike needs the target_type input");
      to = like->dtype();
    }
    REDUCE_ASSIGN(Tensor out, cast_tensor(x, to, options_));
    ctx.set_output(0, std::move(out));
    return {};
  }

 private:
  std::optional<DType> to_;
  CastOptions options_;
};

// BitCast shares the input's bytes under the target dtype. Only a 0 or 1 byte is a valid bool, so bytes
// read as bool are checked first.
class BitCastKernel : public Kernel {
 public:
  explicit BitCastKernel(DType to) : to_(to) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (dtype_is_packed(x.dtype())) return make_error("cannot bit-cast " + std::string(dtype_name(x.dtype())) + ": its elements are narrower than a byte");
    if (dtype_size(x.dtype()) != dtype_size(to_))
      return make_error("cannot bit-cast " + std::string(dtype_name(x.dtype())) + " to " +
                        std::string(dtype_name(to_)) + ": the widths differ");
    if (to_ == DType::Bool && x.dtype() != DType::Bool)
      for (std::byte b : x.bytes())
        if (std::to_integer<unsigned>(b) > 1) return make_error("a byte other than 0 or 1 is not a valid bool");
    REDUCE_ASSIGN(Tensor out, Tensor::view(to_, x.shape(), x.owner(), x.bytes().data(), x.byte_size()));
    ctx.set_output(0, std::move(out));
    return {};
  }

 private:
  DType to_;
};

// Cast-1 named the target type with a string ("FLOAT"); later opsets use the TensorProto number.
std::optional<int32_t> onnx_type_from_name(const std::string& name) {
  static const std::pair<const char*, int32_t> kNames[] = {
      {"FLOAT", 1},   {"UINT8", 2},  {"INT8", 3},    {"UINT16", 4},  {"INT16", 5},   {"INT32", 6},
      {"INT64", 7},   {"STRING", 8}, {"BOOL", 9},    {"FLOAT16", 10}, {"DOUBLE", 11}, {"UINT32", 12},
      {"UINT64", 13}, {"BFLOAT16", 16}};
  for (const auto& [n, v] : kNames)
    if (name == n) return v;
  return std::nullopt;
}

// `saturate` (opset 19+, default 1) and `round_mode` (opset 25+, default "up"), shared by Cast and CastLike.
Expected<CastOptions> cast_options(const Node& node, int64_t opset) {
  CastOptions options;
  if (opset >= 19) options.saturate = attr_int(node, "saturate", 1) != 0;
  if (opset >= 25) {
    const std::string mode = attr_string(node, "round_mode", "up");
    if (mode == "up") options.round_mode = E8M0Rounding::Up;
    else if (mode == "down") options.round_mode = E8M0Rounding::Down;
    else if (mode == "nearest") options.round_mode = E8M0Rounding::Nearest;
    else return make_error("round_mode must be 'up', 'down' or 'nearest', not '" + mode + "'");
  }
  return options;
}

}  // namespace

Expected<KernelPtr> make_cast(const Node& node, int64_t opset) {
  const Attribute* a = node.attribute("to");
  if (!a) return make_error("Cast needs the 'to' attribute");
  std::optional<int32_t> onnx_type;
  if (a->kind == Attribute::Kind::Int) onnx_type = static_cast<int32_t>(a->i);
  else if (a->kind == Attribute::Kind::String) onnx_type = onnx_type_from_name(a->s);
  std::optional<DType> to;
  if (onnx_type && (a->kind != Attribute::Kind::Int || a->i == *onnx_type)) to = dtype_from_onnx(*onnx_type);
  if (!to || !castable(*to)) return make_error("unsupported target type in 'to'");
  REDUCE_ASSIGN(CastOptions options, cast_options(node, opset));
  return KernelPtr(new CastKernel(*to, options));
}

Expected<KernelPtr> make_cast_like(const Node& node, int64_t opset) {
  REDUCE_ASSIGN(CastOptions options, cast_options(node, opset));
  return KernelPtr(new CastKernel(std::nullopt, options));
}

Expected<KernelPtr> make_bit_cast(const Node& node, int64_t) {
  const Attribute* a = node.attribute("to");
  if (!a || a->kind != Attribute::Kind::Int) return make_error("BitCast needs the integer 'to' attribute");
  std::optional<DType> to;
  if (a->i >= 0 && a->i <= INT32_MAX) to = dtype_from_onnx(static_cast<int32_t>(a->i));
  // 4- and 2-bit types are one byte per element in memory, not their bits: no bit-cast to or from them.
  if (!to || dtype_size(*to) == 0 || dtype_is_packed(*to)) return make_error("unsupported target type in 'to'");
  return KernelPtr(new BitCastKernel(*to));
}

}  // namespace reduce::ref
