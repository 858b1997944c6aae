// Shape, Size, ConstantOfShape, Range, EyeLike: tensors made from shapes or scalars. Sizes taken from data
// are checked against the tensor size limit (by allocate) before anything is allocated.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "reference/cast.h"
#include "reference/int_input.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

class ShapeKernel : public Kernel {
 public:
  ShapeKernel(int64_t start, int64_t end) : start_(start), end_(end) {}
  Status compute(KernelContext& ctx) const override {
    const Shape& s = ctx.input(0)->shape();
    const int64_t r = static_cast<int64_t>(s.size());
    auto clamp = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
    const int64_t b = clamp(start_), e = std::max(b, clamp(end_));
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, DType::Int64, {e - b}));
    std::copy(s.begin() + b, s.begin() + e, out->mutable_data<int64_t>().begin());
    return {};
  }

 private:
  int64_t start_, end_;
};

class SizeKernel : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    REDUCE_ASSIGN(uint64_t n, element_count(ctx.input(0)->shape()));
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, DType::Int64, {}));
    out->mutable_data<int64_t>()[0] = static_cast<int64_t>(n);
    return {};
  }
};

class ConstantOfShapeKernel : public Kernel {
 public:
  explicit ConstantOfShapeKernel(Tensor value) : value_(std::move(value)) {}
  Status compute(KernelContext& ctx) const override {
    REDUCE_ASSIGN(Shape shape, int_values(*ctx.input(0), "shape"));
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, value_.dtype(), shape));
    const size_t es = value_.byte_size();
    auto bytes = out->mutable_bytes();
    // allocate() zero-fills, so only a nonzero value needs writing.
    bool zero = true;
    for (std::byte b : value_.bytes()) zero = zero && b == std::byte{0};
    if (!zero)
      for (size_t off = 0; off < bytes.size(); off += es) std::memcpy(bytes.data() + off, value_.bytes().data(), es);
    return {};
  }

 private:
  Tensor value_;
};

// ceil((limit - start) / delta) elements, computed in a wider type (the difference may overflow T) and
// checked against the size limit before anything is allocated.
Expected<int64_t> range_count(long double s, long double l, long double d, size_t element_size) {
  if (d == 0) return make_error("delta must not be 0");
  const long double count = std::ceil((l - s) / d);
  if (!std::isfinite(count)) return make_error("range is not finite");
  if (count * element_size > static_cast<long double>(max_tensor_bytes())) {
    char size[32];
    std::snprintf(size, sizeof size, "%.3Lg", count);
    return make_error(std::string("range of ") + size + " elements exceeds the size limit of " +
                      std::to_string(max_tensor_bytes()) + " bytes");
  }
  return count > 0 ? static_cast<int64_t>(count) : 0;
}

class RangeKernel : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& start = *ctx.input(0);
    const Tensor& limit = *ctx.input(1);
    const Tensor& delta = *ctx.input(2);
    if (limit.dtype() != start.dtype() || delta.dtype() != start.dtype())
      return make_error("start, limit and delta must have the same type");
    if (start.elements() != 1 || limit.elements() != 1 || delta.elements() != 1)
      return make_error("start, limit and delta must be scalars");
    if (is_half(start.dtype())) return half_range(ctx, start, limit, delta);
    return visit_dtype(start.dtype(), [&]<typename T>() -> Status {
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int16_t> ||
                    std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
        const T s = start.data<T>()[0], l = limit.data<T>()[0], d = delta.data<T>()[0];
        REDUCE_ASSIGN(int64_t n, range_count(s, l, d, sizeof(T)));
        REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, start.dtype(), {n}));
        auto o = out->mutable_data<T>();
        for (int64_t i = 0; i < n; ++i) {
          // Integers: the true value lies between start and limit, so wrapping unsigned arithmetic gives it.
          if constexpr (std::is_integral_v<T>)
            o[static_cast<size_t>(i)] = static_cast<T>(static_cast<uint64_t>(s) + static_cast<uint64_t>(i) * static_cast<uint64_t>(d));
          else o[static_cast<size_t>(i)] = s + static_cast<T>(i) * d;
        }
        return {};
      } else {
        return make_error("unsupported type " + std::string(dtype_name(start.dtype())));
      }
    });
  }

 private:
  // float16/bfloat16: each element is start + i * delta in double (exact for the counts a tensor can
  // hold), rounded once to the half type.
  static Status half_range(KernelContext& ctx, const Tensor& start, const Tensor& limit, const Tensor& delta) {
    REDUCE_ASSIGN(Tensor ws, widen(start));
    REDUCE_ASSIGN(Tensor wl, widen(limit));
    REDUCE_ASSIGN(Tensor wd, widen(delta));
    const double s = ws.data<float>()[0], l = wl.data<float>()[0], d = wd.data<float>()[0];
    REDUCE_ASSIGN(int64_t n, range_count(s, l, d, dtype_size(start.dtype())));
    REDUCE_ASSIGN(Tensor values, Tensor::allocate(DType::Double, {n}));
    auto v = values.mutable_data<double>();
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = s + static_cast<double>(i) * d;
    REDUCE_ASSIGN(Tensor out, cast_tensor(values, start.dtype()));
    ctx.set_output(0, std::move(out));
    return {};
  }
};

class EyeLikeKernel : public Kernel {
 public:
  EyeLikeKernel(int64_t dtype, int64_t k) : dtype_(dtype), k_(k) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    if (in.rank() != 2) return make_error("EyeLike needs a 2-D input, got " + shape_to_string(in.shape()));
    DType dtype = in.dtype();
    if (dtype_ >= 0) {
      auto d = dtype_from_onnx(static_cast<int32_t>(dtype_));
      // The narrow types (float8, int4, ...) are not among EyeLike's: a byte 1 is not their one.
      if (!d || dtype_is_small_float(*d) || dtype_is_small_int(*d)) return make_error("unsupported dtype " + std::to_string(dtype_));
      dtype = *d;
    }
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, dtype, in.shape()));
    const int64_t rows = in.shape()[0], cols = in.shape()[1];
    Status s = visit_dtype(dtype, [&]<typename T>() -> Status {
      T one;
      if (dtype == DType::Float16) one = static_cast<T>(0x3C00);
      else if (dtype == DType::BFloat16) one = static_cast<T>(0x3F80);
      else if (dtype == DType::Complex64 || dtype == DType::Complex128 || dtype == DType::String)
        return make_error("unsupported dtype " + std::string(dtype_name(dtype)));
      else one = static_cast<T>(1);
      auto o = out->mutable_data<T>();
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t j = i + k_;
        if (j >= 0 && j < cols) o[static_cast<size_t>(i * cols + j)] = one;
      }
      return {};
    });
    return s;
  }

 private:
  int64_t dtype_, k_;
};

}  // namespace

Expected<KernelPtr> make_shape(const Node& node, int64_t) {
  return KernelPtr(new ShapeKernel(attr_int(node, "start", 0), attr_int(node, "end", INT64_MAX)));
}
Expected<KernelPtr> make_size(const Node&, int64_t) { return KernelPtr(new SizeKernel()); }
Expected<KernelPtr> make_constant_of_shape(const Node& node, int64_t) {
  const Attribute* a = node.attribute("value");
  if (!a) return KernelPtr(new ConstantOfShapeKernel(Tensor::allocate(DType::Float, {1}).value()));
  if (a->kind != Attribute::Kind::Tensor || a->t.elements() != 1 || a->t.empty())
    return make_error("value must be a one-element tensor");
  return KernelPtr(new ConstantOfShapeKernel(a->t));
}
Expected<KernelPtr> make_range(const Node&, int64_t) { return KernelPtr(new RangeKernel()); }
Expected<KernelPtr> make_eye_like(const Node& node, int64_t) {
  return KernelPtr(new EyeLikeKernel(attr_int(node, "dtype", -1), attr_int(node, "k", 0)));
}

}  // namespace reduce::ref
