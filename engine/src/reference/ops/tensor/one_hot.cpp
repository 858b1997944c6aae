// OneHot: a new axis of size depth holding on_value at each index and off_value elsewhere; indices out of
// [-depth, depth) give an all-off row, as the spec says.
#include <cmath>
#include <cstring>
#include <limits>

#include "reference/kernel.h"

namespace reduce::ref {

namespace {

// Indices and depth may be any numeric type; read as int64 (floats truncated, as the spec's casts do).
Expected<std::vector<int64_t>> numeric_as_int(const Tensor& t, const std::string& what) {
  std::vector<int64_t> v(t.elements());
  for (size_t i = 0; i < v.size(); ++i) {
    const double x = t.element_as_double(i);
    if (t.dtype() == DType::Int64) v[i] = t.data<int64_t>()[i];  // exact beyond 2^53
    else if (std::isfinite(x) && std::fabs(x) < 9.2e18) v[i] = static_cast<int64_t>(x);
    else return make_error(what + " value " + std::to_string(x) + " is not a valid integer");
  }
  if (t.dtype() == DType::UInt64)
    for (size_t i = 0; i < v.size(); ++i)
      if (t.data<uint64_t>()[i] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return make_error(what + " value is too large");
  return v;
}

class OneHotKernel : public Kernel {
 public:
  explicit OneHotKernel(int64_t axis) : axis_(axis) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& idx = *ctx.input(0);
    const Tensor& depth_t = *ctx.input(1);
    const Tensor& values = *ctx.input(2);
    if (dtype_size(idx.dtype()) == 0 || dtype_size(depth_t.dtype()) == 0) return make_error("unsupported input type");
    if (depth_t.elements() != 1) return make_error("depth must be a scalar");
    if (values.elements() != 2) return make_error("values must hold [off_value, on_value]");
    REDUCE_ASSIGN(auto depth_v, numeric_as_int(depth_t, "depth"));
    const int64_t depth = depth_v[0];
    if (depth < 1) return make_error("depth must be positive, got " + std::to_string(depth));
    REDUCE_ASSIGN(auto indices, numeric_as_int(idx, "indices"));
    const int64_t out_rank = static_cast<int64_t>(idx.rank()) + 1;
    if (axis_ < -out_rank || axis_ >= out_rank)
      return make_error("axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(out_rank));
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + out_rank : axis_);
    Shape out_shape = idx.shape();
    out_shape.insert(out_shape.begin() + static_cast<ptrdiff_t>(axis), depth);
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, values.dtype(), out_shape));
    // Output laid out as [outer, depth, inner] where indices are [outer, inner].
    size_t inner = 1;
    for (size_t d = axis; d < idx.rank(); ++d) inner *= static_cast<size_t>(idx.shape()[d]);
    const size_t es = dtype_size(values.dtype());
    const std::byte* off = values.bytes().data();
    const std::byte* on = off + es;
    std::byte* dst = out->mutable_bytes().data();
    const size_t total = out->elements();
    for (size_t i = 0; i < total; ++i) std::memcpy(dst + i * es, off, es);
    for (size_t k = 0; k < indices.size(); ++k) {
      int64_t v = indices[k];
      if (v < 0) v += depth;
      if (v < 0 || v >= depth) continue;
      const size_t o = k / inner, i = k % inner;
      std::memcpy(dst + ((o * static_cast<size_t>(depth) + static_cast<size_t>(v)) * inner + i) * es, on, es);
    }
    return {};
  }

 private:
  int64_t axis_;
};

}  // namespace

Expected<KernelPtr> make_one_hot(const Node& node, int64_t) { return KernelPtr(new OneHotKernel(attr_int(node, "axis", -1))); }

}  // namespace reduce::ref
