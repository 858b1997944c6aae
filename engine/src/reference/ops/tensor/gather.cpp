// Gather, GatherElements, GatherND: read elements or slices at data-given indices (negative ones count
// from the end; out-of-range ones are errors).
#include <cstring>

#include "reference/index_offsets.h"
#include "reference/kernel.h"

namespace reduce::ref {

namespace {

Shape concat_shapes(std::span<const int64_t> a, std::span<const int64_t> b, std::span<const int64_t> c = {}) {
  Shape s(a.begin(), a.end());
  s.insert(s.end(), b.begin(), b.end());
  s.insert(s.end(), c.begin(), c.end());
  return s;
}

class GatherKernel : public Kernel {
 public:
  explicit GatherKernel(int64_t axis) : axis_(axis) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& data = *ctx.input(0);
    REDUCE_ASSIGN(auto indices, int_values(*ctx.input(1), "indices"));
    if (data.rank() == 0) return make_error("cannot gather from a scalar");
    REDUCE_ASSIGN(size_t axis, normalize_axis(axis_, data.rank()));
    const std::span<const int64_t> ds(data.shape());
    const Shape out_shape = concat_shapes(ds.first(axis), ctx.input(1)->shape(), ds.subspan(axis + 1));
    const int64_t dim = ds[axis];
    for (int64_t& i : indices) {
      REDUCE_ASSIGN(i, checked_index(i, dim));
    }
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, data.dtype(), out_shape));
    const size_t es = dtype_size(data.dtype());
    const size_t outer = static_cast<size_t>(dims_product(ds.first(axis)));
    const size_t block = static_cast<size_t>(dims_product(ds.subspan(axis + 1))) * es;
    const std::byte* src = data.bytes().data();
    std::byte* dst = out->mutable_bytes().data();
    for (size_t o = 0; o < outer; ++o)
      for (size_t k = 0; k < indices.size(); ++k, dst += block)
        std::memcpy(dst, src + (o * static_cast<size_t>(dim) + static_cast<size_t>(indices[k])) * block, block);
    return {};
  }

 private:
  int64_t axis_;
};

class GatherElementsKernel : public Kernel {
 public:
  explicit GatherElementsKernel(int64_t axis) : axis_(axis) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& data = *ctx.input(0);
    const Tensor& idx = *ctx.input(1);
    REDUCE_ASSIGN(auto indices, int_values(idx, "indices"));
    if (data.rank() == 0) return make_error("cannot gather from a scalar");
    REDUCE_ASSIGN(size_t axis, normalize_axis(axis_, data.rank()));
    REDUCE_ASSIGN(auto offsets, element_offsets(data.shape(), idx.shape(), indices, axis));
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, data.dtype(), idx.shape()));
    visit_element_size(dtype_size(data.dtype()), [&]<typename T>() {
      const T* src = reinterpret_cast<const T*>(data.bytes().data());
      T* dst = reinterpret_cast<T*>(out->mutable_bytes().data());
      for (size_t k = 0; k < offsets.size(); ++k) dst[k] = src[offsets[k]];
    });
    return {};
  }

 private:
  int64_t axis_;
};

class GatherNDKernel : public Kernel {
 public:
  explicit GatherNDKernel(int64_t batch_dims) : batch_dims_(batch_dims) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& data = *ctx.input(0);
    const Tensor& idx = *ctx.input(1);
    REDUCE_ASSIGN(auto indices, int_values(idx, "indices"));
    const size_t b = static_cast<size_t>(batch_dims_);
    REDUCE_ASSIGN(auto offsets, nd_offsets(data.shape(), idx.shape(), indices, b));
    const std::span<const int64_t> is(idx.shape());
    const size_t k = static_cast<size_t>(is.back());
    const std::span<const int64_t> slice_dims = std::span<const int64_t>(data.shape()).subspan(b + k);
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, data.dtype(), concat_shapes(is.first(is.size() - 1), slice_dims)));
    const size_t block = static_cast<size_t>(dims_product(slice_dims)) * dtype_size(data.dtype());
    std::byte* dst = out->mutable_bytes().data();
    for (size_t t = 0; t < offsets.size(); ++t, dst += block)
      std::memcpy(dst, data.bytes().data() + offsets[t] * dtype_size(data.dtype()), block);
    return {};
  }

 private:
  int64_t batch_dims_;
};

}  // namespace

Expected<KernelPtr> make_gather(const Node& node, int64_t) { return KernelPtr(new GatherKernel(attr_int(node, "axis", 0))); }
Expected<KernelPtr> make_gather_elements(const Node& node, int64_t) {
  return KernelPtr(new GatherElementsKernel(attr_int(node, "axis", 0)));
}
Expected<KernelPtr> make_gather_nd(const Node& node, int64_t) {
  const int64_t b = attr_int(node, "batch_dims", 0);
  if (b < 0) return make_error("batch_dims must not be negative");
  return KernelPtr(new GatherNDKernel(b));
}

}  // namespace reduce::ref
