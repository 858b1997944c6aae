// Gemm: Y = alpha * op(A) * op(B) + beta * C, C unidirectionally broadcast; float sums in double.
#include <type_traits>

#include "reference/broadcast.h"
#include "reference/gemm.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

struct GemmAttributes {
  bool trans_a = false, trans_b = false;
  double alpha = 1.0, beta = 1.0;
};

// The product's dims, op(A) [m, k] * op(B) [k, n], and C's strides broadcast to [m, n] (empty without C).
struct GemmShape {
  size_t m = 0, k = 0, n = 0;
  std::vector<size_t> c_strides;
};

Expected<GemmShape> gemm_shape(const GemmAttributes& attrs, const Tensor& a, const Tensor& b, const Tensor* c) {
  if (a.dtype() != b.dtype() || (c && c->dtype() != a.dtype()))
    return make_error("inputs A, B and C must have the same type");
  if (a.rank() != 2 || b.rank() != 2)
    return make_error("A and B must be matrices, got " + shape_to_string(a.shape()) + " and " +
                      shape_to_string(b.shape()));
  GemmShape g;
  g.m = static_cast<size_t>(a.shape()[attrs.trans_a ? 1 : 0]);
  g.k = static_cast<size_t>(a.shape()[attrs.trans_a ? 0 : 1]);
  const size_t kb = static_cast<size_t>(b.shape()[attrs.trans_b ? 1 : 0]);
  g.n = static_cast<size_t>(b.shape()[attrs.trans_b ? 0 : 1]);
  if (g.k != kb)
    return make_error("inner dimensions differ: " + shape_to_string(a.shape()) + " and " + shape_to_string(b.shape()));
  if (c) {
    const Shape out_shape{static_cast<int64_t>(g.m), static_cast<int64_t>(g.n)};
    const Shape shapes[] = {out_shape, c->shape()};
    auto bs = broadcast_shapes(shapes);
    if (c->rank() > 2 || !bs.ok() || *bs != out_shape)
      return make_error("C " + shape_to_string(c->shape()) + " cannot be broadcast to " + shape_to_string(out_shape));
    g.c_strides = broadcast_strides(c->shape(), out_shape);
  }
  return g;
}

// The operands of one typed product: A and B as stored, C (null when unused) and the output.
template <typename T>
struct GemmOperands {
  const T* a;
  const T* b;
  const T* c;
  T* y;
  T c_at(const GemmShape& g, size_t i, size_t j) const { return c[i * g.c_strides[0] + j * g.c_strides[1]]; }
};

// Floats: blocks of op(A) and op(B) as doubles through the double GEMM, rounded once to T.
template <typename T>
void gemm_floating(const GemmAttributes& attrs, const GemmShape& g, const GemmOperands<T>& p) {
  const size_t m = g.m, n = g.n, k = g.k;
  for_each_gemm_block(1, m, n, k, [&](const GemmBlock& blk) {
    // The block's rows of op(A) and columns of op(B) as doubles, in their stored orientation.
    auto& [sums, a_block, b_block] = gemm_scratch();
    sums.resize(blk.rows * blk.cols);
    a_block.resize(blk.rows * k);
    b_block.resize(k * blk.cols);
    if (attrs.trans_a) block_as_double(p.a + blk.row, m, k, blk.rows, a_block.data());
    else block_as_double(p.a + blk.row * k, k, blk.rows, k, a_block.data());
    if (attrs.trans_b) block_as_double(p.b + blk.col * k, k, blk.cols, k, b_block.data());
    else block_as_double(p.b + blk.col, n, k, blk.cols, b_block.data());
    gemm_f64(blk.rows, blk.cols, k, a_block.data(), attrs.trans_a ? blk.rows : k, attrs.trans_a,
             b_block.data(), attrs.trans_b ? k : blk.cols, attrs.trans_b, sums.data(), blk.cols);
    for (size_t r = 0; r < blk.rows; ++r)
      for (size_t j = 0; j < blk.cols; ++j) {
        const size_t i = blk.row + r, jj = blk.col + j;
        double v = attrs.alpha * sums[r * blk.cols + j];
        if (p.c) v += attrs.beta * static_cast<double>(p.c_at(g, i, jj));
        p.y[i * n + jj] = static_cast<T>(v);
      }
  });
}

// Integers: exact wrapping sums; alpha and beta other than 1 are applied in double.
template <typename T>
void gemm_integer(const GemmAttributes& attrs, const GemmShape& g, const GemmOperands<T>& p) {
  const size_t m = g.m, n = g.n, k = g.k;
  const bool exact = attrs.alpha == 1.0 && (attrs.beta == 1.0 || !p.c);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      uint64_t acc = 0;
      for (size_t t = 0; t < k; ++t) {
        const T av = attrs.trans_a ? p.a[t * m + i] : p.a[i * k + t];
        const T bv = attrs.trans_b ? p.b[j * k + t] : p.b[t * n + j];
        acc += static_cast<uint64_t>(static_cast<int64_t>(av)) * static_cast<uint64_t>(static_cast<int64_t>(bv));
      }
      if (exact) {
        if (p.c) acc += static_cast<uint64_t>(static_cast<int64_t>(p.c_at(g, i, j)));
        p.y[i * n + j] = static_cast<T>(acc);
      } else {
        double v = attrs.alpha * static_cast<double>(static_cast<T>(acc));
        if (p.c) v += attrs.beta * static_cast<double>(p.c_at(g, i, j));
        p.y[i * n + j] = static_cast<T>(v);
      }
    }
}

class GemmKernel : public Kernel {
 public:
  explicit GemmKernel(GemmAttributes attrs) : attrs_(attrs) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    const Tensor* c = ctx.input_count() > 2 ? ctx.input(2) : nullptr;
    REDUCE_ASSIGN(GemmShape g, gemm_shape(attrs_, a, b, c));
    REDUCE_ASSIGN(Tensor wa, widen(a));
    REDUCE_ASSIGN(Tensor wb, widen(b));
    Tensor wc;
    if (c) {
      REDUCE_ASSIGN(wc, widen(*c));
    }
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wa.dtype(), Shape{static_cast<int64_t>(g.m), static_cast<int64_t>(g.n)}));
    const bool use_c = c && attrs_.beta != 0.0;
    Status status = visit_dtype(wa.dtype(), [&]<typename T>() -> Status {
      if constexpr (std::is_same_v<T, bool>) {
        return make_error("bool inputs are not supported");
      } else {
        const GemmOperands<T> p{wa.data<T>().data(), wb.data<T>().data(), use_c ? wc.data<T>().data() : nullptr,
                                out.mutable_data<T>().data()};
        if constexpr (std::is_floating_point_v<T>) gemm_floating(attrs_, g, p);
        else gemm_integer(attrs_, g, p);
        return {};
      }
    });
    REDUCE_TRY(status);
    REDUCE_ASSIGN(Tensor result, narrow(out, a.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  GemmAttributes attrs_;
};

}  // namespace

Expected<KernelPtr> make_gemm(const Node& node, int64_t) {
  GemmAttributes a;
  a.trans_a = attr_int(node, "transA", 0) != 0;
  a.trans_b = attr_int(node, "transB", 0) != 0;
  a.alpha = attr_float(node, "alpha", 1.0f);
  a.beta = attr_float(node, "beta", 1.0f);
  return KernelPtr(new GemmKernel(a));
}

}  // namespace reduce::ref
