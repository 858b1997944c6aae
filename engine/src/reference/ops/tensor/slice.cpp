// Slice: starts/ends/axes as attributes (opset 1) or inputs with steps (10+), clamped as the spec says,
// copied with one strided copy (negative steps are negative source strides).
#include <algorithm>

#include "reference/int_input.h"
#include "reference/kernel.h"
#include "reference/strided_copy.h"

namespace reduce::ref {

namespace {

struct SliceSpec {
  std::vector<int64_t> starts, ends, axes, steps;
};

class SliceKernel : public Kernel {
 public:
  SliceKernel(bool from_inputs, SliceSpec spec) : from_inputs_(from_inputs), spec_(std::move(spec)) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    SliceSpec s = spec_;
    if (from_inputs_) {
      if (!ctx.input(1) || !ctx.input(2)) return make_error("starts and ends are required");
      REDUCE_ASSIGN(s.starts, int_values(*ctx.input(1), "starts"));
      REDUCE_ASSIGN(s.ends, int_values(*ctx.input(2), "ends"));
      if (ctx.input(3)) {
        REDUCE_ASSIGN(s.axes, int_values(*ctx.input(3), "axes"));
      }
      if (ctx.input(4)) {
        REDUCE_ASSIGN(s.steps, int_values(*ctx.input(4), "steps"));
      }
    }
    const size_t n = s.starts.size();
    if (s.axes.empty())
      for (size_t i = 0; i < n; ++i) s.axes.push_back(static_cast<int64_t>(i));
    if (s.steps.empty()) s.steps.assign(n, 1);
    if (s.ends.size() != n || s.axes.size() != n || s.steps.size() != n)
      return make_error("starts, ends, axes and steps must have the same length");

    const size_t rank = in.rank();
    const auto in_strides = contiguous_strides(in.shape());
    Shape out_shape = in.shape();
    std::vector<int64_t> src_strides = in_strides;
    std::vector<bool> seen(rank, false);
    int64_t offset = 0;
    for (size_t i = 0; i < n; ++i) {
      REDUCE_ASSIGN(size_t axis, normalize_axis(s.axes[i], rank));
      if (axis >= rank) return make_error("cannot slice a scalar");
      if (seen[axis]) return make_error("axes " + shape_to_string(s.axes) + " repeat an axis");
      seen[axis] = true;
      const int64_t dim = in.shape()[axis], step = s.steps[i];
      if (step == 0) return make_error("steps must not be 0");
      int64_t start = s.starts[i], end = s.ends[i];
      if (start < 0) start = start < -dim ? -1 : start + dim;  // saturates before the add can overflow
      if (end < 0) end = end < -dim ? -1 : end + dim;
      int64_t count = 0;
      if (dim == 0) {
        start = 0;
      } else if (step > 0) {
        start = std::clamp<int64_t>(start, 0, dim);
        end = std::clamp<int64_t>(end, 0, dim);
        if (end > start) count = 1 + (end - start - 1) / step;
      } else {
        start = std::clamp<int64_t>(start, 0, dim - 1);
        end = std::clamp<int64_t>(end, -1, dim - 1);
        const int64_t back = step == INT64_MIN ? INT64_MAX : -step;
        if (start > end) count = 1 + (start - end - 1) / back;
      }
      out_shape[axis] = count;
      if (count > 0) offset += start * in_strides[axis];
      // More than one element means |step| < dim, so the product cannot overflow.
      src_strides[axis] = count > 1 ? step * in_strides[axis] : 0;
    }
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, in.dtype(), out_shape));
    const size_t es = dtype_size(in.dtype());
    if (out->elements() == 0) return {};
    strided_copy(out->mutable_bytes().data(), in.bytes().data() + offset * static_cast<int64_t>(es), es, out_shape,
                 contiguous_strides(out_shape), src_strides);
    return {};
  }

 private:
  bool from_inputs_;
  SliceSpec spec_;
};

}  // namespace

Expected<KernelPtr> make_slice_attr(const Node& node, int64_t) {
  if (!node.attribute("starts") || !node.attribute("ends")) return make_error("Slice needs starts and ends attributes");
  SliceSpec s{attr_ints(node, "starts"), attr_ints(node, "ends"), attr_ints(node, "axes"), {}};
  return KernelPtr(new SliceKernel(false, std::move(s)));
}
Expected<KernelPtr> make_slice(const Node&, int64_t) { return KernelPtr(new SliceKernel(true, {})); }

}  // namespace reduce::ref
