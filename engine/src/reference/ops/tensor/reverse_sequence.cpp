// ReverseSequence: for each batch entry, reverses the first sequence_lens[b] steps along the time axis.
#include <cstring>

#include "reference/int_input.h"
#include "reference/kernel.h"
#include "reference/strided_copy.h"

namespace reduce::ref {

namespace {

class ReverseSequenceKernel : public Kernel {
 public:
  ReverseSequenceKernel(int64_t batch_axis, int64_t time_axis) : batch_axis_(batch_axis), time_axis_(time_axis) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    if (in.rank() < 2) return make_error("input must have rank 2 or more, got " + shape_to_string(in.shape()));
    REDUCE_ASSIGN(auto lens, int_values(*ctx.input(1), "sequence_lens"));
    const size_t batch_axis = static_cast<size_t>(batch_axis_), time_axis = static_cast<size_t>(time_axis_);
    const int64_t batch = in.shape()[batch_axis], time = in.shape()[time_axis];
    if (static_cast<int64_t>(lens.size()) != batch)
      return make_error("sequence_lens has " + std::to_string(lens.size()) + " values for a batch of " + std::to_string(batch));
    for (int64_t l : lens)
      if (l < 0 || l > time)
        return make_error("sequence length " + std::to_string(l) + " is outside [0, " + std::to_string(time) + "]");
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, in.dtype(), in.shape()));
    const auto strides = contiguous_strides(in.shape());
    const size_t es = dtype_size(in.dtype());
    // Each (batch, time) pair is a slice over the remaining axes: copy it from its mirrored time step.
    Shape rest = in.shape();
    std::vector<int64_t> rest_strides = strides;
    rest[batch_axis] = rest[time_axis] = 1;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < time; ++t) {
        const int64_t from = t < lens[static_cast<size_t>(b)] ? lens[static_cast<size_t>(b)] - 1 - t : t;
        const int64_t dst = b * strides[batch_axis] + t * strides[time_axis];
        const int64_t src = b * strides[batch_axis] + from * strides[time_axis];
        strided_copy(out->mutable_bytes().data() + dst * static_cast<int64_t>(es), in.bytes().data() + src * static_cast<int64_t>(es),
                     es, rest, rest_strides, rest_strides);
      }
    return {};
  }

 private:
  int64_t batch_axis_, time_axis_;
};

}  // namespace

Expected<KernelPtr> make_reverse_sequence(const Node& node, int64_t) {
  const int64_t b = attr_int(node, "batch_axis", 1), t = attr_int(node, "time_axis", 0);
  if ((b != 0 && b != 1) || (t != 0 && t != 1) || b == t) return make_error("batch_axis and time_axis must be 0 and 1 in some order");
  return KernelPtr(new ReverseSequenceKernel(b, t));
}

}  // namespace reduce::ref
