// Transpose: permutes axes (default: reversed) with one strided copy.
#include "reference/kernel.h"
#include "reference/strided_copy.h"

namespace reduce::ref {

namespace {

class TransposeKernel : public Kernel {
 public:
  explicit TransposeKernel(std::vector<int64_t> perm) : perm_(std::move(perm)) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const size_t rank = in.rank();
    std::vector<int64_t> perm = perm_;
    if (perm.empty())
      for (size_t d = rank; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
    if (perm.size() != rank)
      return make_error("perm " + shape_to_string(perm_) + " does not match rank " + std::to_string(rank));
    std::vector<bool> seen(rank, false);
    const auto in_strides = contiguous_strides(in.shape());
    Shape out_shape(rank);
    std::vector<int64_t> src_strides(rank);
    for (size_t d = 0; d < rank; ++d) {
      REDUCE_ASSIGN(size_t p, normalize_axis(perm[d], rank));
      if (seen[p]) return make_error("perm " + shape_to_string(perm_) + " is not a permutation");
      seen[p] = true;
      out_shape[d] = in.shape()[p];
      src_strides[d] = in_strides[p];
    }
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, in.dtype(), out_shape));
    strided_copy(out->mutable_bytes().data(), in.bytes().data(), dtype_size(in.dtype()), out_shape,
                 contiguous_strides(out_shape), src_strides);
    return {};
  }

 private:
  std::vector<int64_t> perm_;
};

}  // namespace

Expected<KernelPtr> make_transpose(const Node& node, int64_t) {
  return KernelPtr(new TransposeKernel(attr_ints(node, "perm")));
}

}  // namespace reduce::ref
