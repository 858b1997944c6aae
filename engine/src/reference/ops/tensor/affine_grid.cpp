// AffineGrid (opset 20): the sampling grid of GridSample for a batch of 2-d or 3-d affine matrices.
#include <type_traits>

#include "reference/int_input.h"
#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

class AffineGridKernel : public Kernel {
 public:
  explicit AffineGridKernel(bool align_corners) : align_corners_(align_corners) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& theta = *ctx.input(0);
    if (!dtype_is_float(theta.dtype())) return make_error("theta must be floating point");
    REDUCE_ASSIGN(std::vector<int64_t> size, int_values(*ctx.input(1), "size"));
    if (size.size() != 4 && size.size() != 5)
      return make_error("size must be [N, C, H, W] or [N, C, D, H, W], got " + shape_to_string(size));
    const size_t nd = size.size() - 2;  // spatial dims, 2 or 3
    const Shape want{size[0], static_cast<int64_t>(nd), static_cast<int64_t>(nd + 1)};
    if (theta.shape() != want)
      return make_error("theta must have shape " + shape_to_string(want) + " for size " + shape_to_string(size) +
                        ", got " + shape_to_string(theta.shape()));
    // The grid lists spatial points from the outermost dim (D or H) to W; each holds nd coordinates, x first.
    Shape out_shape{size[0]};
    for (size_t d = 0; d < nd; ++d) {
      if (size[2 + d] < 0) return make_error("size " + shape_to_string(size) + " has a negative dim");
      out_shape.push_back(size[2 + d]);
    }
    out_shape.push_back(static_cast<int64_t>(nd));
    REDUCE_ASSIGN(Tensor wt, widen(theta));
    REDUCE_ASSIGN(uint64_t out_elements, element_count(out_shape));
    REDUCE_TRY(ctx.reserve(out_elements * dtype_size(wt.dtype())));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wt.dtype(), out_shape));
    visit_dtype(wt.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>)
        fill_grid<T>(out_shape, wt.data<T>().data(), out.mutable_data<T>().data());
    });
    REDUCE_ASSIGN(Tensor y, narrow(out, theta.dtype()));
    ctx.set_output(0, std::move(y));
    return {};
  }

 private:
  // The normalized coordinate in [-1, 1] of pixel i of n: pixel centres, or corners with align_corners
  // (where a single pixel sits at -1, as in the operator's function body).
  double base(int64_t i, int64_t n) const {
    if (align_corners_) return n <= 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1);
    return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(n);
  }

  // Point p of batch b is theta[b] · (x, y[, z], 1), with x the coordinate along the last (W) dim.
  template <typename T>
  void fill_grid(const Shape& out_shape, const T* theta, T* grid) const {
    const size_t nd = out_shape.size() - 2;
    size_t points = 1;
    for (size_t d = 0; d < nd; ++d) points *= static_cast<size_t>(out_shape[1 + d]);
    const size_t batch = static_cast<size_t>(out_shape[0]);
    parallel_for(batch * points, 4096, [&](size_t begin, size_t end) {
      double coord[4];
      for (size_t q = begin; q < end; ++q) {
        const T* t = theta + (q / points) * nd * (nd + 1);
        size_t rest = q % points;
        for (size_t d = nd; d-- > 0;) {  // coord[0] is x (last dim), coord[nd - 1] the outermost
          const int64_t n = out_shape[1 + d];
          coord[nd - 1 - d] = base(static_cast<int64_t>(rest % static_cast<size_t>(n)), n);
          rest /= static_cast<size_t>(n);
        }
        coord[nd] = 1.0;
        for (size_t r = 0; r < nd; ++r) {
          double sum = 0;
          for (size_t c = 0; c <= nd; ++c) sum += static_cast<double>(t[r * (nd + 1) + c]) * coord[c];
          grid[q * nd + r] = static_cast<T>(sum);
        }
      }
    });
  }

  bool align_corners_;
};

}  // namespace

Expected<KernelPtr> make_affine_grid(const Node& node, int64_t) {
  const int64_t align = attr_int(node, "align_corners", 0);
  if (align != 0 && align != 1) return make_error("align_corners must be 0 or 1");
  return KernelPtr(new AffineGridKernel(align == 1));
}

}  // namespace reduce::ref
