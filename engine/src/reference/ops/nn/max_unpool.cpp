// MaxUnpool: scatters pooled values back to the positions MaxPool's Indices name; the rest is zero.
#include <cstring>

#include "reference/kernel.h"
#include "pool_geometry.h"

namespace reduce::ref {

namespace {

class MaxUnpoolKernel : public Kernel {
 public:
  explicit MaxUnpoolKernel(PoolAttributes attrs) : attrs_(std::move(attrs)) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& ind = *ctx.input(1);
    const Tensor* shape_in = ctx.input_count() > 2 ? ctx.input(2) : nullptr;
    const size_t n = attrs_.kernel.size();
    if (x.rank() != n + 2) return make_error("input " + shape_to_string(x.shape()) + " does not match the kernel rank");
    if (ind.dtype() != DType::Int64 || ind.shape() != x.shape())
      return make_error("indices must be int64 with the input's shape " + shape_to_string(x.shape()));
    const size_t esize = dtype_size(x.dtype());
    if (esize == 0) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    // Indices address the default unpooled shape; output_shape only pads that result at the end of each axis.
    Shape natural{x.shape()[0], x.shape()[1]};
    for (size_t d = 0; d < n; ++d) {
      const int64_t len = (x.shape()[d + 2] - 1) * attrs_.strides[d] + attrs_.kernel[d] - attrs_.pads[d] - attrs_.pads[d + n];
      if (len < 0) return make_error("pads leave a negative output size");
      natural.push_back(len);
    }
    Shape out_shape = natural;
    if (shape_in) {
      if (shape_in->dtype() != DType::Int64 || shape_in->elements() != n + 2)
        return make_error("output_shape must be int64 with " + std::to_string(n + 2) + " values");
      auto v = shape_in->data<int64_t>();
      out_shape.assign(v.begin(), v.end());
      if (out_shape[0] != x.shape()[0] || out_shape[1] != x.shape()[1])
        return make_error("output_shape " + shape_to_string(out_shape) + " must keep the input's N and C");
    }
    REDUCE_ASSIGN(uint64_t natural_total, element_count(natural));
    REDUCE_ASSIGN(Tensor* out, ctx.allocate_output(0, x.dtype(), out_shape));
    auto idx = ind.data<int64_t>();
    const std::byte* src = x.bytes().data();
    std::byte* dst = out->mutable_bytes().data();
    for (size_t i = 0; i < idx.size(); ++i) {
      if (idx[i] < 0 || static_cast<uint64_t>(idx[i]) >= natural_total)
        return make_error("index " + std::to_string(idx[i]) + " is out of range for " + shape_to_string(natural));
      uint64_t rem = static_cast<uint64_t>(idx[i]), pos = 0, stride = 1;
      for (size_t d = natural.size(); d-- > 0;) {
        const uint64_t coord = rem % static_cast<uint64_t>(natural[d]);
        rem /= static_cast<uint64_t>(natural[d]);
        if (coord >= static_cast<uint64_t>(out_shape[d]))
          return make_error("index " + std::to_string(idx[i]) + " lies outside output_shape " + shape_to_string(out_shape));
        pos += coord * stride;
        stride *= static_cast<uint64_t>(out_shape[d]);
      }
      std::memcpy(dst + pos * esize, src + i * esize, esize);
    }
    return {};
  }

 private:
  PoolAttributes attrs_;
};

}  // namespace

Expected<KernelPtr> make_max_unpool(const Node& node, int64_t) {
  REDUCE_ASSIGN(auto attrs, read_pool_attributes(node, false, false));
  return KernelPtr(new MaxUnpoolKernel(std::move(attrs)));
}

}  // namespace reduce::ref
