// TopK: the k largest (or smallest) values along an axis with their indices; ties go to the lower index.
// Results are always sorted, which also satisfies sorted=0 (order unspecified).
#include <algorithm>
#include <numeric>
#include <type_traits>

#include "reference/int_input.h"
#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"
#include "reference/total_order.h"

namespace reduce::ref {

namespace {

class TopKKernel : public Kernel {
 public:
  TopKKernel(int64_t axis, bool largest, bool k_from_input, int64_t k)
      : axis_(axis), largest_(largest), k_from_input_(k_from_input), k_(k) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    if (in.rank() == 0) return make_error("TopK needs rank 1 or more");
    int64_t k = k_;
    if (k_from_input_) {
      if (!ctx.input(1)) return make_error("the K input is missing");
      REDUCE_ASSIGN(k, int_scalar(*ctx.input(1), "K"));
    }
    REDUCE_ASSIGN(size_t axis, normalize_axis(axis_, in.rank()));
    const int64_t dim = in.shape()[axis];
    if (k < 0 || k > dim)
      return make_error("k = " + std::to_string(k) + " is outside [0, " + std::to_string(dim) + "]");
    Shape out_shape = in.shape();
    out_shape[axis] = k;
    REDUCE_ASSIGN(Tensor wide, widen(in));
    REDUCE_ASSIGN(Tensor values, Tensor::allocate(wide.dtype(), out_shape));
    REDUCE_ASSIGN(Tensor * indices, ctx.allocate_output(1, DType::Int64, out_shape));
    size_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(in.shape()[d]);
    for (size_t d = axis + 1; d < in.rank(); ++d) inner *= static_cast<size_t>(in.shape()[d]);
    Status s = visit_dtype(wide.dtype(), [&]<typename T>() -> Status {
      if constexpr (std::is_same_v<T, bool>) {
        return make_error("bool inputs are not supported");
      } else {
        if (wide.dtype() == DType::Complex64 || wide.dtype() == DType::Complex128 || wide.dtype() == DType::String)
          return make_error("unsupported type " + std::string(dtype_name(wide.dtype())));
        auto x = wide.data<T>();
        auto v = values.mutable_data<T>();
        auto ix = indices->mutable_data<int64_t>();
        const size_t n = static_cast<size_t>(dim), kk = static_cast<size_t>(k);
        parallel_for(outer * inner, std::max<size_t>(1, 4096 / std::max<size_t>(n, 1)), [&](size_t begin, size_t end) {
          std::vector<int64_t> order(n);
          for (size_t line = begin; line < end; ++line) {
            const size_t o = line / inner, i = line % inner;
            const size_t base = o * n * inner + i;
            auto at = [&](int64_t j) { return x[base + static_cast<size_t>(j) * inner]; };
            std::iota(order.begin(), order.end(), int64_t{0});
            auto before = [&](int64_t a, int64_t b) {
              const int c = compare_total(at(a), at(b));
              return c != 0 ? (largest_ ? c > 0 : c < 0) : a < b;
            };
            std::partial_sort(order.begin(), order.begin() + static_cast<ptrdiff_t>(kk), order.end(), before);
            const size_t out_base = o * kk * inner + i;
            for (size_t j = 0; j < kk; ++j) {
              v[out_base + j * inner] = at(order[j]);
              ix[out_base + j * inner] = order[j];
            }
          }
        });
        return {};
      }
    });
    REDUCE_TRY(s);
    REDUCE_ASSIGN(Tensor result, narrow(values, in.dtype()));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  int64_t axis_;
  bool largest_;
  bool k_from_input_;
  int64_t k_;
};

}  // namespace

Expected<KernelPtr> make_top_k_attr(const Node& node, int64_t) {
  if (!node.attribute("k")) return make_error("TopK needs a k attribute");
  return KernelPtr(new TopKKernel(attr_int(node, "axis", -1), true, false, attr_int(node, "k", 0)));
}
Expected<KernelPtr> make_top_k(const Node& node, int64_t opset) {
  const bool largest = opset < 11 || attr_int(node, "largest", 1) != 0;
  return KernelPtr(new TopKKernel(attr_int(node, "axis", -1), largest, true, 0));
}

}  // namespace reduce::ref
