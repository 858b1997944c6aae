// Det: determinants of square matrices [*, M, M] by LU decomposition with partial pivoting in double.
#include <cmath>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

// Determinant of an m x m row-major matrix (destroyed).
double determinant(std::vector<double>& a, size_t m) {
  double det = 1;
  for (size_t col = 0; col < m; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < m; ++r)
      if (std::abs(a[r * m + col]) > std::abs(a[pivot * m + col])) pivot = r;
    if (a[pivot * m + col] == 0) return 0;
    if (pivot != col) {
      for (size_t k = 0; k < m; ++k) std::swap(a[col * m + k], a[pivot * m + k]);
      det = -det;
    }
    const double p = a[col * m + col];
    det *= p;
    for (size_t r = col + 1; r < m; ++r) {
      const double f = a[r * m + col] / p;
      for (size_t k = col + 1; k < m; ++k) a[r * m + k] -= f * a[col * m + k];
    }
  }
  return det;
}

class DetKernel : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (!dtype_is_float(x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    if (x.rank() < 2 || x.shape()[x.rank() - 1] != x.shape()[x.rank() - 2])
      return make_error("input must be square matrices [*, M, M], got " + shape_to_string(x.shape()));
    const size_t m = static_cast<size_t>(x.shape().back());
    const Shape out_shape(x.shape().begin(), x.shape().end() - 2);
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), out_shape));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const T* in = wx.data<T>().data();
        auto o = out.mutable_data<T>();
        std::vector<double> a(m * m);
        for (size_t b = 0; b < o.size(); ++b) {
          for (size_t k = 0; k < m * m; ++k) a[k] = static_cast<double>(in[b * m * m + k]);
          o[b] = static_cast<T>(determinant(a, m));
        }
      }
    });
    REDUCE_ASSIGN(Tensor result, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }
};

}  // namespace

Expected<KernelPtr> make_det(const Node&, int64_t) { return KernelPtr(new DetKernel()); }

}  // namespace reduce::ref
