// CenterCropPad (opset 18): crops or zero-pads the chosen axes to a target size, keeping the centre.
#include <algorithm>

#include "reference/int_input.h"
#include "reference/kernel.h"
#include "reference/strided_copy.h"

namespace reduce::ref {

namespace {

class CenterCropPadKernel : public Kernel {
 public:
  explicit CenterCropPadKernel(std::vector<int64_t> axes) : axes_(std::move(axes)) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    if (in.dtype() == DType::String) return make_error("string tensors are not supported");
    REDUCE_ASSIGN(std::vector<int64_t> target, int_values(*ctx.input(1), "shape"));
    const size_t rank = in.rank();
    std::vector<int64_t> axes = axes_;
    if (axes.empty())
      for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
    if (target.size() != axes.size())
      return make_error("shape " + shape_to_string(target) + " must have one size per cropped or padded axis (" +
                        std::to_string(axes.size()) + ")");
    Shape out_shape = in.shape();
    std::vector<bool> seen(rank, false);
    for (size_t k = 0; k < axes.size(); ++k) {
      REDUCE_ASSIGN(size_t d, normalize_axis(axes[k], rank));
      if (seen[d]) return make_error("axes " + shape_to_string(axes) + " repeat an axis");
      seen[d] = true;
      if (target[k] < 0) return make_error("shape " + shape_to_string(target) + " has a negative size");
      out_shape[d] = target[k];
    }
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, in.dtype(), out_shape));
    // Per axis the kept span is min(in, out) long; the surplus of the larger side is split with the
    // smaller half before (floor), as the spec's reference does for odd differences.
    Shape region(rank);
    int64_t src_offset = 0, dst_offset = 0;
    const auto src_strides = contiguous_strides(in.shape()), dst_strides = contiguous_strides(out_shape);
    for (size_t d = 0; d < rank; ++d) {
      const int64_t n = in.shape()[d], m = out_shape[d];
      region[d] = std::min(n, m);
      src_offset += std::max<int64_t>(0, (n - m) / 2) * src_strides[d];
      dst_offset += std::max<int64_t>(0, (m - n) / 2) * dst_strides[d];
    }
    if (out->elements() == 0 || in.elements() == 0) return {};
    const size_t es = dtype_size(in.dtype());
    strided_copy(out->mutable_bytes().data() + static_cast<size_t>(dst_offset) * es,
                 in.bytes().data() + static_cast<size_t>(src_offset) * es, es, region, dst_strides, src_strides);
    return {};
  }

 private:
  std::vector<int64_t> axes_;  // empty: all axes
};

}  // namespace

Expected<KernelPtr> make_center_crop_pad(const Node& node, int64_t) {
  return KernelPtr(new CenterCropPadKernel(attr_ints(node, "axes")));
}

}  // namespace reduce::ref
