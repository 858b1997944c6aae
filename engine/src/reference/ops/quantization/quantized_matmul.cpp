// MatMulInteger and QLinearMatMul: (a - a_zero_point) * (b - b_zero_point) summed exactly in double, then requantized.
#include <cmath>

#include "reference/batched_matmul.h"
#include "reference/broadcast.h"
#include "reference/kernel.h"

namespace reduce::ref {

namespace {

bool is_8bit(DType t) { return t == DType::UInt8 || t == DType::Int8; }

// A per-tensor or per-row (for A) / per-column (for B) parameter, aligned to the matrix `shape` of its
// input: a 1-D per-row vector of A becomes [M, 1]. Fails unless it broadcasts to `shape`.
Expected<Shape> parameter_shape(const Tensor& p, const Shape& shape, bool rows, const char* name) {
  Shape ps = p.shape();
  if (p.elements() == 1) ps = {};
  else if (rows && ps.size() == 1) ps = {ps[0], 1};
  const Shape shapes[] = {shape, ps};
  auto b = broadcast_shapes(shapes);
  if (!b.ok() || *b != shape)
    return make_error(std::string(name) + " " + shape_to_string(p.shape()) + " does not fit its input " +
                      shape_to_string(shape));
  return ps;
}

// The values of p broadcast to `target` as doubles.
std::vector<double> broadcast_values(const Tensor& p, const Shape& p_shape, const Shape& target) {
  size_t total = 1;
  for (int64_t d : target) total *= static_cast<size_t>(d);
  std::vector<double> v(total);
  for_each_broadcast2(target, target, p_shape, [&](size_t o, size_t, size_t j) { v[o] = p.element_as_double(j); });
  return v;
}

// x - zero_point as doubles, in x's layout (as a matrix with batch dims, see MatMulShape).
Expected<Tensor> offset_input(const Tensor& x, const Shape& matrix, const Tensor* zero, bool rows, const char* name) {
  REDUCE_ASSIGN(Tensor d, Tensor::allocate(DType::Double, {static_cast<int64_t>(x.elements())}));
  auto dst = d.mutable_data<double>();
  if (!zero) {
    for (size_t i = 0; i < dst.size(); ++i) dst[i] = x.element_as_double(i);
    return d;
  }
  if (zero->dtype() != x.dtype()) return make_error(std::string(name) + " must have the type of its input");
  REDUCE_ASSIGN(Shape zs, parameter_shape(*zero, matrix, rows, name));
  for_each_broadcast2(matrix, matrix, zs,
                      [&](size_t o, size_t i, size_t j) { dst[o] = x.element_as_double(i) - zero->element_as_double(j); });
  return d;
}

int32_t wrap_int32(double sum) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(sum))); }

class MatMulIntegerKernel : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    if (!is_8bit(a.dtype()) || !is_8bit(b.dtype())) return make_error("inputs A and B must be uint8 or int8");
    REDUCE_ASSIGN(MatMulShape s, matmul_shape(a.shape(), b.shape()));
    const Tensor* az = ctx.input_count() > 2 ? ctx.input(2) : nullptr;
    const Tensor* bz = ctx.input_count() > 3 ? ctx.input(3) : nullptr;
    REDUCE_ASSIGN(Tensor ad, offset_input(a, s.a_matrix, az, true, "a_zero_point"));
    REDUCE_ASSIGN(Tensor bd, offset_input(b, s.b_matrix, bz, false, "b_zero_point"));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(DType::Int32, s.out));
    int32_t* y = out.mutable_data<int32_t>().data();
    batched_matmul_f64(s, ad.data<double>().data(), bd.data<double>().data(),
                       [&](size_t batch, size_t row, size_t col, size_t count, const double* sums) {
                         int32_t* dst = y + (batch * s.m + row) * s.n + col;
                         for (size_t j = 0; j < count; ++j) dst[j] = wrap_int32(sums[j]);
                       });
    ctx.set_output(0, std::move(out));
    return {};
  }
};

class QLinearMatMulKernel : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    for (size_t i = 0; i < 8; ++i)
      if (!ctx.input(i)) return make_error("input " + std::to_string(i) + " is required");
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(3);
    const Tensor& a_scale = *ctx.input(1);
    const Tensor& b_scale = *ctx.input(4);
    const Tensor& y_scale = *ctx.input(6);
    const Tensor& y_zero = *ctx.input(7);
    if (!is_8bit(a.dtype()) || !is_8bit(b.dtype()) || !is_8bit(y_zero.dtype()))
      return make_error("a, b and y_zero_point must be uint8 or int8");
    const DType st = a_scale.dtype();
    if (st != DType::Float && st != DType::Float16 && st != DType::BFloat16)
      return make_error("scales must be float, float16 or bfloat16");
    if (b_scale.dtype() != st || y_scale.dtype() != st) return make_error("scales must have the same type");
    if (y_scale.elements() != 1 || y_zero.elements() != 1) return make_error("y_scale and y_zero_point must be scalars");
    REDUCE_ASSIGN(MatMulShape s, matmul_shape(a.shape(), b.shape()));
    REDUCE_ASSIGN(Tensor ad, offset_input(a, s.a_matrix, ctx.input(2), true, "a_zero_point"));
    REDUCE_ASSIGN(Tensor bd, offset_input(b, s.b_matrix, ctx.input(5), false, "b_zero_point"));
    REDUCE_ASSIGN(Shape as, parameter_shape(a_scale, s.a_matrix, true, "a_scale"));
    REDUCE_ASSIGN(Shape bs, parameter_shape(b_scale, s.b_matrix, false, "b_scale"));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(y_zero.dtype(), s.out));
    if (out.elements() == 0) {
      ctx.set_output(0, std::move(out));
      return {};
    }
    // Scales per (batch, row) of A and per (batch, column) of B over the broadcast batch dims.
    Shape a_target = s.batch_shape, b_target = s.batch_shape;
    a_target.insert(a_target.end(), {static_cast<int64_t>(s.m), 1});
    b_target.insert(b_target.end(), {1, static_cast<int64_t>(s.n)});
    const auto a_s = broadcast_values(a_scale, as, a_target);
    const auto b_s = broadcast_values(b_scale, bs, b_target);
    // Half scales are exact in float, so every scale type forms its multiplier the same way.
    const float ys = static_cast<float>(y_scale.element_as_double(0));
    const double yz = y_zero.element_as_double(0);
    const bool is_unsigned = y_zero.dtype() == DType::UInt8;
    const double lo = is_unsigned ? 0 : -128, hi = is_unsigned ? 255 : 127;
    std::byte* y = out.mutable_bytes().data();
    batched_matmul_f64(s, ad.data<double>().data(), bd.data<double>().data(),
                       [&](size_t batch, size_t row, size_t col, size_t count, const double* sums) {
                         const size_t at = (batch * s.m + row) * s.n + col;
                         const float sa = static_cast<float>(a_s[batch * s.m + row]);
                         for (size_t j = 0; j < count; ++j) {
                           // The multiplier is formed in float, as the scales are; applied in double.
                           const float mult = sa * static_cast<float>(b_s[batch * s.n + col + j]) / ys;
                           const double acc = static_cast<double>(wrap_int32(sums[j]));
                           const double q = std::clamp(std::nearbyint(acc * static_cast<double>(mult)) + yz, lo, hi);
                           y[at + j] = is_unsigned ? static_cast<std::byte>(static_cast<uint8_t>(q))
                                                   : static_cast<std::byte>(static_cast<int8_t>(q));
                         }
                       });
    ctx.set_output(0, std::move(out));
    return {};
  }
};

}  // namespace

Expected<KernelPtr> make_matmul_integer(const Node&, int64_t) { return KernelPtr(new MatMulIntegerKernel()); }
Expected<KernelPtr> make_qlinear_matmul(const Node&, int64_t) { return KernelPtr(new QLinearMatMulKernel()); }

}  // namespace reduce::ref
