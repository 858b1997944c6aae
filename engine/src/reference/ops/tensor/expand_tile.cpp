// Expand and Tile: output shapes come from data (checked against the tensor size limit before any
// allocation), elements are moved by one strided copy with zero strides on repeated axes.
#include <limits>

#include "reference/broadcast.h"
#include "reference/int_input.h"
#include "reference/kernel.h"
#include "reference/strided_copy.h"

namespace reduce::ref {

namespace {

class ExpandKernel : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    REDUCE_ASSIGN(Shape target, int_values(*ctx.input(1), "shape"));
    for (int64_t d : target)
      if (d < 0) return make_error("shape " + shape_to_string(target) + " has a negative dim");
    const Shape shapes[] = {in.shape(), target};
    REDUCE_ASSIGN(Shape out_shape, broadcast_shapes(shapes));
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, in.dtype(), out_shape));
    const auto src_strides = broadcast_strides(in.shape(), out_shape);
    strided_copy(out->mutable_bytes().data(), in.bytes().data(), dtype_size(in.dtype()), out_shape,
                 contiguous_strides(out_shape), std::vector<int64_t>(src_strides.begin(), src_strides.end()));
    return {};
  }
};

class TileKernel : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    REDUCE_ASSIGN(auto repeats, int_values(*ctx.input(1), "repeats"));
    const size_t rank = in.rank();
    if (repeats.size() != rank)
      return make_error("repeats " + shape_to_string(repeats) + " must have one value per dim of " +
                        shape_to_string(in.shape()));
    // The output as [r0, d0, r1, d1, ...]: repeat axes read the source with stride 0.
    Shape out_shape(rank), split_shape, src_strides;
    const auto in_strides = contiguous_strides(in.shape());
    for (size_t d = 0; d < rank; ++d) {
      const int64_t r = repeats[d], dim = in.shape()[d];
      if (r < 0) return make_error("repeats " + shape_to_string(repeats) + " has a negative value");
      if (dim != 0 && r > std::numeric_limits<int64_t>::max() / dim)
        return make_error("repeats " + shape_to_string(repeats) + " of " + shape_to_string(in.shape()) + " overflow");
      out_shape[d] = dim * r;
      split_shape.insert(split_shape.end(), {r, dim});
      src_strides.insert(src_strides.end(), {0, in_strides[d]});
    }
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, in.dtype(), out_shape));
    strided_copy(out->mutable_bytes().data(), in.bytes().data(), dtype_size(in.dtype()), split_shape,
                 contiguous_strides(split_shape), src_strides);
    return {};
  }
};

}  // namespace

Expected<KernelPtr> make_expand(const Node&, int64_t) { return KernelPtr(new ExpandKernel()); }
Expected<KernelPtr> make_tile(const Node&, int64_t) { return KernelPtr(new TileKernel()); }

}  // namespace reduce::ref
