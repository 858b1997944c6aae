// TensorScatter (opset 24): a KV-cache update; writes `update` into a copy of `past_cache` along the sequence
// axis at a per-batch write index, linearly or wrapping around (circular).
#include <cstring>

#include "reference/int_input.h"
#include "reference/kernel.h"

namespace reduce::ref {

namespace {

class TensorScatterKernel : public Kernel {
 public:
  TensorScatterKernel(int64_t axis, bool circular) : axis_(axis), circular_(circular) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& past = *ctx.input(0);
    const Tensor& update = *ctx.input(1);
    const Tensor* write_indices = ctx.input(2);
    if (past.dtype() == DType::String) return make_error("string tensors are not supported");
    if (update.dtype() != past.dtype()) return make_error("update must have the type of past_cache");
    const size_t rank = past.rank();
    REDUCE_ASSIGN(size_t axis, normalize_axis(axis_, rank));
    if (axis == 0) return make_error("axis must not be the batch dimension 0");
    bool same_other_dims = update.rank() == rank;
    for (size_t d = 0; same_other_dims && d < rank; ++d)
      same_other_dims = d == axis || update.shape()[d] == past.shape()[d];
    const int64_t max_seq = past.shape()[axis];
    if (!same_other_dims || update.shape()[axis] > max_seq)
      return make_error("update " + shape_to_string(update.shape()) + " must match past_cache " +
                        shape_to_string(past.shape()) + " except for a shorter axis " + std::to_string(axis));
    const int64_t seq = update.shape()[axis], batch = past.shape()[0];
    std::vector<int64_t> starts(static_cast<size_t>(batch), 0);
    if (write_indices) {
      REDUCE_ASSIGN(starts, int_values(*write_indices, "write_indices"));
      if (write_indices->shape() != Shape{batch})
        return make_error("write_indices must have shape [" + std::to_string(batch) + "], got " +
                          shape_to_string(write_indices->shape()));
    }
    for (int64_t start : starts)
      if (start < 0 || (!circular_ && start > max_seq - seq))
        return make_error("write index " + std::to_string(start) + " with " + std::to_string(seq) +
                          " updates does not fit a sequence axis of " + std::to_string(max_seq) +
                          (circular_ ? "" : " in linear mode"));
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, past.dtype(), past.shape()));
    if (out->elements() == 0) return {};
    std::memcpy(out->mutable_bytes().data(), past.bytes().data(), past.byte_size());
    if (update.elements() == 0) return {};
    // Rows are the dims before the axis (batch first); a block is one sequence step of a row.
    size_t rows = 1, per_batch = 1, block = dtype_size(past.dtype());
    for (size_t d = 0; d < axis; ++d) rows *= static_cast<size_t>(past.shape()[d]);
    for (size_t d = 1; d < axis; ++d) per_batch *= static_cast<size_t>(past.shape()[d]);
    for (size_t d = axis + 1; d < rank; ++d) block *= static_cast<size_t>(past.shape()[d]);
    std::byte* dst = out->mutable_bytes().data();
    const std::byte* src = update.bytes().data();
    for (size_t r = 0; r < rows; ++r) {
      const int64_t start = circular_ ? starts[r / per_batch] % max_seq : starts[r / per_batch];  // no overflow below
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t at = circular_ ? (start + s) % max_seq : start + s;
        std::memcpy(dst + (r * static_cast<size_t>(max_seq) + static_cast<size_t>(at)) * block,
                    src + (r * static_cast<size_t>(seq) + static_cast<size_t>(s)) * block, block);
      }
    }
    return {};
  }

 private:
  int64_t axis_;
  bool circular_;
};

}  // namespace

Expected<KernelPtr> make_tensor_scatter(const Node& node, int64_t) {
  const std::string mode = attr_string(node, "mode", "linear");
  if (mode != "linear" && mode != "circular") return make_error("mode must be 'linear' or 'circular', got '" + mode + "'");
  return KernelPtr(new TensorScatterKernel(attr_int(node, "axis", -2), mode == "circular"));
}

}  // namespace reduce::ref
