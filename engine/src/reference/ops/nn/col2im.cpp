// Col2Im (opset 18): sums the columns of sliding blocks [N, C*prod(block), L] back into an image [N, C, image...].
#include <algorithm>
#include <type_traits>
#include <utility>

#include "reference/int_input.h"
#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

// Where the blocks sit: per spatial dim the image size, block size, dilation, stride, leading pad
// and the number of block positions.
struct Col2ImGeometry {
  std::vector<int64_t> image, block, dilations, strides, pad_begin, positions;
  size_t image_size = 1, block_size = 1, position_count = 1;
};

class Col2ImKernel : public Kernel {
 public:
  Col2ImKernel(std::vector<int64_t> dilations, std::vector<int64_t> pads, std::vector<int64_t> strides)
      : dilations_(std::move(dilations)), pads_(std::move(pads)), strides_(std::move(strides)) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (!dtype_is_float(x.dtype())) return make_error("input must be floating point");
    REDUCE_ASSIGN(std::vector<int64_t> image, int_values(*ctx.input(1), "image_shape"));
    REDUCE_ASSIGN(std::vector<int64_t> block, int_values(*ctx.input(2), "block_shape"));
    REDUCE_ASSIGN(Col2ImGeometry g, geometry(std::move(image), std::move(block)));
    if (x.rank() != 3 || x.shape()[1] % static_cast<int64_t>(g.block_size) != 0 ||
        x.shape()[2] != static_cast<int64_t>(g.position_count))
      return make_error("input must be [N, C * " + std::to_string(g.block_size) + ", " + std::to_string(g.position_count) +
                        "] for these image and block shapes, got " + shape_to_string(x.shape()));
    Shape out_shape{x.shape()[0], x.shape()[1] / static_cast<int64_t>(g.block_size)};
    out_shape.insert(out_shape.end(), g.image.begin(), g.image.end());
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(uint64_t out_elements, element_count(out_shape));
    REDUCE_TRY(ctx.reserve(out_elements * dtype_size(wx.dtype())));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), out_shape));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) fold<T>(g, wx.data<T>().data(), out.mutable_data<T>().data(), out_elements);
    });
    REDUCE_ASSIGN(Tensor y, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(y));
    return {};
  }

 private:
  Expected<Col2ImGeometry> geometry(std::vector<int64_t> image, std::vector<int64_t> block) const {
    const size_t nd = image.size();
    if (nd == 0 || block.size() != nd) return make_error("image_shape and block_shape must have the same non-zero length");
    auto per_dim = [&](const std::vector<int64_t>& v, size_t count, int64_t fallback,
                       const char* name) -> Expected<std::vector<int64_t>> {
      if (v.empty()) return std::vector<int64_t>(count, fallback);
      if (v.size() != count)
        return make_error(std::string(name) + " must have " + std::to_string(count) + " values for " +
                          std::to_string(nd) + " spatial dims");
      return v;
    };
    Col2ImGeometry g;
    REDUCE_ASSIGN(g.dilations, per_dim(dilations_, nd, 1, "dilations"));
    REDUCE_ASSIGN(g.strides, per_dim(strides_, nd, 1, "strides"));
    REDUCE_ASSIGN(std::vector<int64_t> pads, per_dim(pads_, 2 * nd, 0, "pads"));
    for (size_t d = 0; d < nd; ++d) {
      if (image[d] <= 0 || block[d] <= 0 || image[d] > (int64_t{1} << 31) || block[d] > (int64_t{1} << 31))
        return make_error("image_shape and block_shape must be positive and at most 2^31");
      const int64_t span = g.dilations[d] * (block[d] - 1) + 1, padded = image[d] + pads[d] + pads[d + nd];
      if (span > padded)
        return make_error("the dilated block (" + std::to_string(span) + ") is larger than the padded image (" +
                          std::to_string(padded) + ") in dim " + std::to_string(d));
      g.positions.push_back((padded - span) / g.strides[d] + 1);
      g.pad_begin.push_back(pads[d]);
      // Each factor is below 2^32 and each product is kept below 2^40, so nothing overflows; the real
      // bound comes later from the input shape and the output allocation.
      for (auto [total, factor] : {std::pair{&g.image_size, image[d]}, std::pair{&g.block_size, block[d]},
                                   std::pair{&g.position_count, g.positions.back()}}) {
        *total *= static_cast<size_t>(factor);
        if (*total > (size_t{1} << 40)) return make_error("image_shape or block_shape is too large");
      }
    }
    g.image = std::move(image);
    g.block = std::move(block);
    return g;
  }

  // Each (n, c) image is owned by one chunk and summed in a fixed order (block offset, then position).
  template <typename T>
  static void fold(const Col2ImGeometry& g, const T* x, T* y, uint64_t out_elements) {
    const size_t nd = g.image.size(), planes = static_cast<size_t>(out_elements) / g.image_size;
    parallel_for(planes, 1, [&](size_t begin, size_t end) {
      std::vector<double> acc(g.image_size);
      std::vector<int64_t> k(nd), l(nd);
      for (size_t p = begin; p < end; ++p) {
        std::fill(acc.begin(), acc.end(), 0.0);
        const T* col = x + p * g.block_size * g.position_count;
        for (size_t kb = 0; kb < g.block_size; ++kb) {
          unravel(kb, g.block, k);
          for (size_t lp = 0; lp < g.position_count; ++lp) {
            unravel(lp, g.positions, l);
            size_t at = 0;
            bool inside = true;
            for (size_t d = 0; d < nd && inside; ++d) {
              const int64_t i = l[d] * g.strides[d] - g.pad_begin[d] + k[d] * g.dilations[d];
              inside = i >= 0 && i < g.image[d];
              at = at * static_cast<size_t>(g.image[d]) + static_cast<size_t>(i);
            }
            if (inside) acc[at] += static_cast<double>(col[kb * g.position_count + lp]);
          }
        }
        T* out = y + p * g.image_size;
        for (size_t i = 0; i < g.image_size; ++i) out[i] = static_cast<T>(acc[i]);
      }
    });
  }

  // The row-major multi-index of `flat` over `dims`.
  static void unravel(size_t flat, const std::vector<int64_t>& dims, std::vector<int64_t>& index) {
    for (size_t d = dims.size(); d-- > 0;) {
      index[d] = static_cast<int64_t>(flat % static_cast<size_t>(dims[d]));
      flat /= static_cast<size_t>(dims[d]);
    }
  }

  std::vector<int64_t> dilations_, pads_, strides_;  // empty when not given
};

}  // namespace

Expected<KernelPtr> make_col2im(const Node& node, int64_t) {
  std::vector<int64_t> dilations = attr_ints(node, "dilations"), pads = attr_ints(node, "pads"),
                       strides = attr_ints(node, "strides");
  for (int64_t v : dilations)
    if (v <= 0 || v > (int64_t{1} << 31)) return make_error("dilations must be positive");
  for (int64_t v : strides)
    if (v <= 0 || v > (int64_t{1} << 31)) return make_error("strides must be positive");
  for (int64_t v : pads)
    if (v < 0 || v > (int64_t{1} << 31)) return make_error("pads must be non-negative");
  if (pads.size() % 2 != 0) return make_error("pads must have an even number of values");
  return KernelPtr(new Col2ImKernel(std::move(dilations), std::move(pads), std::move(strides)));
}

}  // namespace reduce::ref
