// Scatter (deprecated), ScatterElements and ScatterND: a copy of data with updates written (or combined by
// the reduction attribute) at data-given indices, applied in index order.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "reference/index_offsets.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

enum class Reduction { None, Add, Mul, Max, Min };

Expected<Reduction> parse_reduction(const Node& node, int64_t opset) {
  const std::string r = attr_string(node, "reduction", "none");
  if (r == "none") return Reduction::None;
  if (opset >= 16 && r == "add") return Reduction::Add;
  if (opset >= 16 && r == "mul") return Reduction::Mul;
  if (opset >= 18 && r == "max") return Reduction::Max;
  if (opset >= 18 && r == "min") return Reduction::Min;
  return make_error("unsupported reduction '" + r + "' at opset " + std::to_string(opset));
}

template <typename T>
T combine(Reduction r, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // Integer overflow wraps (computed unsigned and wide, so neither UB nor promotion surprises).
    const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    switch (r) {
      case Reduction::Add: return static_cast<T>(x + y);
      case Reduction::Mul: return static_cast<T>(x * y);
      case Reduction::Max: return std::max(a, b);
      case Reduction::Min: return std::min(a, b);
      default: return b;
    }
  } else {
    switch (r) {
      case Reduction::Add: return a + b;
      case Reduction::Mul: return a * b;
      case Reduction::Max: return std::max(a, b);
      case Reduction::Min: return std::min(a, b);
      default: return b;
    }
  }
}

// out = data; then for each update k, the `block` elements at offsets[k] take (or combine with) updates.
Status scatter(KernelContext& ctx, Reduction reduction, const Tensor& data, const Tensor& updates,
               const std::vector<size_t>& offsets, size_t block) {
  if (updates.dtype() != data.dtype())
    return make_error("updates (" + std::string(dtype_name(updates.dtype())) + ") and data (" +
                      std::string(dtype_name(data.dtype())) + ") have different types");
  if (offsets.size() * block != updates.elements())
    return make_error("updates " + shape_to_string(updates.shape()) + " do not match the indices");
  const size_t es = dtype_size(data.dtype());
  if (reduction == Reduction::None) {
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, data.dtype(), data.shape()));
    std::byte* dst = out->mutable_bytes().data();
    if (data.byte_size()) std::memcpy(dst, data.bytes().data(), data.byte_size());
    for (size_t k = 0; k < offsets.size(); ++k)
      std::memcpy(dst + offsets[k] * es, updates.bytes().data() + k * block * es, block * es);
    return {};
  }
  if (data.dtype() == DType::Bool || data.dtype() == DType::Complex64 || data.dtype() == DType::Complex128)
    return make_error("reductions on " + std::string(dtype_name(data.dtype())) + " are not supported");
  // Half types combine in float and round once per output.
  REDUCE_ASSIGN(Tensor wide_data, widen(data));
  REDUCE_ASSIGN(Tensor wide_updates, widen(updates));
  REDUCE_ASSIGN(Tensor out, Tensor::copy_of(wide_data.dtype(), data.shape(), wide_data.bytes()));
  visit_dtype(out.dtype(), [&]<typename T>() {
    auto o = out.mutable_data<T>();
    auto u = wide_updates.data<T>();
    for (size_t k = 0; k < offsets.size(); ++k)
      for (size_t j = 0; j < block; ++j) o[offsets[k] + j] = combine<T>(reduction, o[offsets[k] + j], u[k * block + j]);
  });
  REDUCE_ASSIGN(Tensor result, narrow(out, data.dtype()));
  ctx.set_output(0, std::move(result));
  return {};
}

class ScatterElementsKernel : public Kernel {
 public:
  ScatterElementsKernel(int64_t axis, Reduction reduction) : axis_(axis), reduction_(reduction) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& data = *ctx.input(0);
    const Tensor& idx = *ctx.input(1);
    const Tensor& updates = *ctx.input(2);
    if (idx.shape() != updates.shape())
      return make_error("indices " + shape_to_string(idx.shape()) + " and updates " + shape_to_string(updates.shape()) +
                        " must have the same shape");
    if (data.rank() == 0) return make_error("cannot scatter into a scalar");
    REDUCE_ASSIGN(size_t axis, normalize_axis(axis_, data.rank()));
    REDUCE_ASSIGN(auto indices, int_values(idx, "indices"));
    REDUCE_ASSIGN(auto offsets, element_offsets(data.shape(), idx.shape(), indices, axis));
    return scatter(ctx, reduction_, data, updates, offsets, 1);
  }

 private:
  int64_t axis_;
  Reduction reduction_;
};

class ScatterNDKernel : public Kernel {
 public:
  explicit ScatterNDKernel(Reduction reduction) : reduction_(reduction) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& data = *ctx.input(0);
    const Tensor& idx = *ctx.input(1);
    const Tensor& updates = *ctx.input(2);
    REDUCE_ASSIGN(auto indices, int_values(idx, "indices"));
    REDUCE_ASSIGN(auto offsets, nd_offsets(data.shape(), idx.shape(), indices, 0));
    // updates must have shape indices.shape[:-1] + data.shape[k:].
    const std::span<const int64_t> is(idx.shape());
    const size_t k = static_cast<size_t>(is.back());
    Shape expected(is.begin(), is.end() - 1);
    expected.insert(expected.end(), data.shape().begin() + static_cast<ptrdiff_t>(k), data.shape().end());
    if (updates.shape() != expected)
      return make_error("updates " + shape_to_string(updates.shape()) + " must have shape " + shape_to_string(expected));
    const size_t block = static_cast<size_t>(dims_product(std::span<const int64_t>(data.shape()).subspan(k)));
    return scatter(ctx, reduction_, data, updates, offsets, block);
  }

 private:
  Reduction reduction_;
};

}  // namespace

Expected<KernelPtr> make_scatter_elements(const Node& node, int64_t opset) {
  REDUCE_ASSIGN(Reduction r, parse_reduction(node, opset));
  return KernelPtr(new ScatterElementsKernel(attr_int(node, "axis", 0), r));
}
Expected<KernelPtr> make_scatter_nd(const Node& node, int64_t opset) {
  REDUCE_ASSIGN(Reduction r, parse_reduction(node, opset));
  return KernelPtr(new ScatterNDKernel(r));
}

}  // namespace reduce::ref
