// Compress (keep slices where a bool condition holds) and NonZero (coordinates of nonzero elements).
#include <cstring>

#include "reference/kernel.h"

namespace reduce::ref {

namespace {

class CompressKernel : public Kernel {
 public:
  CompressKernel(bool has_axis, int64_t axis) : has_axis_(has_axis), axis_(axis) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const Tensor& cond = *ctx.input(1);
    if (cond.dtype() != DType::Bool || cond.rank() != 1)
      return make_error("condition must be a 1-D bool tensor, got " + std::string(dtype_name(cond.dtype())) +
                        shape_to_string(cond.shape()));
    // Without an axis the input is flattened: one axis of all elements.
    size_t outer = 1, dim = in.elements(), inner = 1, axis = 0;
    if (has_axis_) {
      if (in.rank() == 0) return make_error("cannot compress a scalar along an axis");
      REDUCE_ASSIGN(axis, normalize_axis(axis_, in.rank()));
      dim = static_cast<size_t>(in.shape()[axis]);
      for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(in.shape()[d]);
      for (size_t d = axis + 1; d < in.rank(); ++d) inner *= static_cast<size_t>(in.shape()[d]);
    }
    auto c = cond.data<uint8_t>();
    std::vector<size_t> kept;
    for (size_t i = 0; i < c.size(); ++i) {
      if (!c[i]) continue;
      if (i >= dim) return make_error("condition selects index " + std::to_string(i) + " of a dimension of " + std::to_string(dim));
      kept.push_back(i);
    }
    Shape out_shape{static_cast<int64_t>(kept.size())};
    if (has_axis_) {
      out_shape = in.shape();
      out_shape[axis] = static_cast<int64_t>(kept.size());
    }
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, in.dtype(), out_shape));
    const size_t block = inner * dtype_size(in.dtype());
    std::byte* dst = out->mutable_bytes().data();
    for (size_t o = 0; o < outer; ++o)
      for (size_t i : kept) {
        std::memcpy(dst, in.bytes().data() + (o * dim + i) * block, block);
        dst += block;
      }
    return {};
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

class NonZeroKernel : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const size_t es = dtype_size(in.dtype());
    if (es == 0) return make_error("unsupported type " + std::string(dtype_name(in.dtype())));
    const bool half = in.dtype() == DType::Float16 || in.dtype() == DType::BFloat16;
    std::vector<size_t> hits;
    for (size_t i = 0; i < in.elements(); ++i) {
      bool nonzero;
      if (half) nonzero = (in.data<uint16_t>()[i] & 0x7FFF) != 0;  // -0 is zero, NaN is not
      else if (dtype_is_float(in.dtype()) || in.dtype() == DType::Complex64 || in.dtype() == DType::Complex128)
        nonzero = in.element_as_double(i) != 0 || (in.dtype() == DType::Complex64 && in.data<float>()[2 * i + 1] != 0) ||
                  (in.dtype() == DType::Complex128 && in.data<double>()[2 * i + 1] != 0);
      else {
        nonzero = false;
        for (size_t b = 0; b < es; ++b) nonzero = nonzero || in.bytes()[i * es + b] != std::byte{0};
      }
      if (nonzero) hits.push_back(i);
    }
    // A scalar counts as a 1-D tensor of one element (numpy's behaviour, which the spec follows).
    const Shape shape = in.rank() ? in.shape() : Shape{1};
    const size_t rank = shape.size();
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, DType::Int64, Shape{static_cast<int64_t>(rank), static_cast<int64_t>(hits.size())}));
    auto o = out->mutable_data<int64_t>();
    for (size_t k = 0; k < hits.size(); ++k) {
      size_t flat = hits[k];
      for (size_t d = rank; d-- > 0;) {
        o[d * hits.size() + k] = static_cast<int64_t>(flat % static_cast<size_t>(shape[d]));
        flat /= static_cast<size_t>(shape[d]);
      }
    }
    return {};
  }
};

}  // namespace

Expected<KernelPtr> make_compress(const Node& node, int64_t) {
  return KernelPtr(new CompressKernel(node.attribute("axis") != nullptr, attr_int(node, "axis", 0)));
}
Expected<KernelPtr> make_non_zero(const Node&, int64_t) { return KernelPtr(new NonZeroKernel()); }

}  // namespace reduce::ref
