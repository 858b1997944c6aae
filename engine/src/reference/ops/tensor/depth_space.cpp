// DepthToSpace and SpaceToDepth (DCR and CRD modes): a 6-D reshape then transpose, done as one strided copy.
#include <array>

#include "reference/kernel.h"
#include "reference/strided_copy.h"

namespace reduce::ref {

namespace {

// Moves `in` viewed as `view` (6-D, same elements) into `out` as view permuted by `perm`.
void permuted_copy(const Tensor& in, Tensor& out, const Shape& view, const std::array<size_t, 6>& perm) {
  const auto strides = contiguous_strides(view);
  Shape shape(6);
  std::vector<int64_t> src(6);
  for (size_t d = 0; d < 6; ++d) {
    shape[d] = view[perm[d]];
    src[d] = strides[perm[d]];
  }
  strided_copy(out.mutable_bytes().data(), in.bytes().data(), dtype_size(in.dtype()), shape, contiguous_strides(shape), src);
}

class DepthToSpaceKernel : public Kernel {
 public:
  DepthToSpaceKernel(int64_t b, bool crd) : b_(b), crd_(crd) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    if (in.rank() != 4) return make_error("input must be 4-D, got " + shape_to_string(in.shape()));
    const int64_t n = in.shape()[0], c = in.shape()[1], h = in.shape()[2], w = in.shape()[3];
    if (c % (b_ * b_) != 0)
      return make_error("channels " + std::to_string(c) + " are not divisible by blocksize² " + std::to_string(b_ * b_));
    const int64_t oc = c / (b_ * b_);
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, in.dtype(), Shape{n, oc, h * b_, w * b_}));
    if (crd_) permuted_copy(in, *out, {n, oc, b_, b_, h, w}, {0, 1, 4, 2, 5, 3});
    else permuted_copy(in, *out, {n, b_, b_, oc, h, w}, {0, 3, 4, 1, 5, 2});
    return {};
  }

 private:
  int64_t b_;
  bool crd_;
};

class SpaceToDepthKernel : public Kernel {
 public:
  SpaceToDepthKernel(int64_t b, bool crd) : b_(b), crd_(crd) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    if (in.rank() != 4) return make_error("input must be 4-D, got " + shape_to_string(in.shape()));
    const int64_t n = in.shape()[0], c = in.shape()[1], h = in.shape()[2], w = in.shape()[3];
    if (h % b_ != 0 || w % b_ != 0)
      return make_error("spatial dims " + shape_to_string(in.shape()) + " are not divisible by blocksize " +
                        std::to_string(b_));
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, in.dtype(), Shape{n, c * b_ * b_, h / b_, w / b_}));
    // Output channel (bh * b + bw) * c + ch in DCR mode, ch * b² + bh * b + bw in CRD mode.
    const Shape view{n, c, h / b_, b_, w / b_, b_};
    if (crd_) permuted_copy(in, *out, view, {0, 1, 3, 5, 2, 4});
    else permuted_copy(in, *out, view, {0, 3, 5, 1, 2, 4});
    return {};
  }

 private:
  int64_t b_;
  bool crd_;
};

Expected<bool> crd_mode(const Node& node) {
  const std::string mode = attr_string(node, "mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return make_error("mode must be DCR or CRD, got '" + mode + "'");
  return mode == "CRD";
}

Expected<int64_t> blocksize(const Node& node) {
  const int64_t b = attr_int(node, "blocksize", 0);
  // Bounded so that b² and dims × b cannot overflow for any real tensor.
  if (b < 1 || b > (int64_t{1} << 20)) return make_error("blocksize must be a positive integer, got " + std::to_string(b));
  return b;
}

}  // namespace

Expected<KernelPtr> make_depth_to_space(const Node& node, int64_t) {
  REDUCE_ASSIGN(int64_t b, blocksize(node));
  REDUCE_ASSIGN(bool crd, crd_mode(node));
  return KernelPtr(new DepthToSpaceKernel(b, crd));
}
Expected<KernelPtr> make_space_to_depth(const Node& node, int64_t) {
  REDUCE_ASSIGN(int64_t b, blocksize(node));
  REDUCE_ASSIGN(bool crd, crd_mode(node));
  return KernelPtr(new SpaceToDepthKernel(b, crd));
}

}  // namespace reduce::ref
