// MatMul: numpy matmul (batch broadcasting, 1-D promotion); floats sum in double, integers wrap like the type.
#include <type_traits>

#include "reference/batched_matmul.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

// Integer products in unsigned 64-bit arithmetic: wraps exactly like the type, without signed overflow.
template <typename T>
void integer_matmul(const MatMulShape& s, const Tensor& a, const Tensor& b, Tensor& out) {
  const T* x = a.data<T>().data();
  const T* w = b.data<T>().data();
  T* y = out.mutable_data<T>().data();
  if (s.a_offsets.empty()) return;
  const size_t work = std::max<size_t>(1, s.k * s.n);
  parallel_for(s.batch * s.m, std::max<size_t>(1, (size_t{1} << 16) / work), [&](size_t begin, size_t end) {
    std::vector<uint64_t> acc(s.n);
    for (size_t r = begin; r < end; ++r) {
      const size_t batch = r / s.m, row = r % s.m;
      const T* ar = x + s.a_offsets[batch] + row * s.k;
      const T* bm = w + s.b_offsets[batch];
      std::fill(acc.begin(), acc.end(), 0);
      for (size_t kk = 0; kk < s.k; ++kk) {
        const auto av = static_cast<uint64_t>(static_cast<int64_t>(ar[kk]));
        const T* br = bm + kk * s.n;
        for (size_t j = 0; j < s.n; ++j) acc[j] += av * static_cast<uint64_t>(static_cast<int64_t>(br[j]));
      }
      for (size_t j = 0; j < s.n; ++j) y[r * s.n + j] = static_cast<T>(acc[j]);
    }
  });
}

class MatMulKernel : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    if (a.dtype() != b.dtype()) return make_error("inputs A and B must have the same type");
    REDUCE_ASSIGN(MatMulShape s, matmul_shape(a.shape(), b.shape()));
    REDUCE_ASSIGN(Tensor wa, widen(a));
    REDUCE_ASSIGN(Tensor wb, widen(b));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wa.dtype(), s.out));
    Status status = visit_dtype(wa.dtype(), [&]<typename T>() -> Status {
      if constexpr (std::is_floating_point_v<T>) {
        matmul_to<T>(s, wa.data<T>().data(), wb.data<T>().data(), out.mutable_data<T>().data());
        return {};
      } else if constexpr (std::is_same_v<T, bool>) {
        return make_error("bool inputs are not supported");
      } else {
        integer_matmul<T>(s, wa, wb, out);
        return {};
      }
    });
    REDUCE_TRY(status);
    REDUCE_ASSIGN(Tensor result, narrow(out, a.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }
};

}  // namespace

Expected<KernelPtr> make_matmul(const Node&, int64_t) { return KernelPtr(new MatMulKernel()); }

}  // namespace reduce::ref
