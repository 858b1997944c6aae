// Unique: distinct elements (or slices along an axis), sorted ascending or in order of first occurrence,
// with first-occurrence indices, inverse indices and counts.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/total_order.h"

namespace reduce::ref {

namespace {

class UniqueKernel : public Kernel {
 public:
  UniqueKernel(bool has_axis, int64_t axis, bool sorted) : has_axis_(has_axis), axis_(axis), sorted_(sorted) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    // Slices along the axis; without an axis, every element of the flattened input is a slice.
    size_t outer = 1, n = in.elements(), inner = 1, axis = 0;
    if (has_axis_) {
      if (in.rank() == 0) return make_error("cannot take unique slices of a scalar");
      REDUCE_ASSIGN(axis, normalize_axis(axis_, in.rank()));
      n = static_cast<size_t>(in.shape()[axis]);
      for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(in.shape()[d]);
      for (size_t d = axis + 1; d < in.rank(); ++d) inner *= static_cast<size_t>(in.shape()[d]);
    }
    if (in.dtype() == DType::Complex64 || in.dtype() == DType::Complex128 || dtype_size(in.dtype()) == 0)
      return make_error("unsupported type " + std::string(dtype_name(in.dtype())));
    REDUCE_ASSIGN(Tensor wide, widen(in));  // half types compare as floats
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::vector<size_t> groups;  // groups[g] is where group g starts in `order`
    visit_dtype(wide.dtype(), [&]<typename T>() {
      auto x = wide.data<T>();
      auto cmp = [&](size_t a, size_t b) {
        for (size_t o = 0; o < outer; ++o)
          for (size_t i = 0; i < inner; ++i)
            if (int c = compare_total(x[(o * n + a) * inner + i], x[(o * n + b) * inner + i])) return c;
        return 0;
      };
      // Stable: the first member of each run of equal slices is its first occurrence.
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cmp(a, b) < 0; });
      for (size_t k = 0; k < n; ++k)
        if (k == 0 || cmp(order[k - 1], order[k]) != 0) groups.push_back(k);
    });
    std::vector<size_t> group_order(groups.size());
    std::iota(group_order.begin(), group_order.end(), size_t{0});
    if (!sorted_)
      std::sort(group_order.begin(), group_order.end(),
                [&](size_t a, size_t b) { return order[groups[a]] < order[groups[b]]; });
    const size_t u = groups.size();
    Shape y_shape{static_cast<int64_t>(u)};
    if (has_axis_) {
      y_shape = in.shape();
      y_shape[axis] = static_cast<int64_t>(u);
    }
    REDUCE_ASSIGN(Tensor * y, ctx.allocate_output(0, in.dtype(), y_shape));
    std::vector<int64_t> first(u), inverse(n), counts(u);
    const size_t block = inner * dtype_size(in.dtype());
    for (size_t r = 0; r < u; ++r) {
      const size_t g = group_order[r];
      const size_t begin = groups[g], end = g + 1 < u ? groups[g + 1] : n;
      first[r] = static_cast<int64_t>(order[begin]);
      counts[r] = static_cast<int64_t>(end - begin);
      for (size_t k = begin; k < end; ++k) inverse[order[k]] = static_cast<int64_t>(r);
      for (size_t o = 0; o < outer; ++o)
        std::memcpy(y->mutable_bytes().data() + (o * u + r) * block, in.bytes().data() + (o * n + order[begin]) * block, block);
    }
    const std::vector<int64_t>* extra[] = {&first, &inverse, &counts};
    for (size_t k = 0; k < 3; ++k) {
      if (ctx.output_count() <= k + 1) break;
      REDUCE_ASSIGN(Tensor * t, ctx.allocate_output(k + 1, DType::Int64, Shape{static_cast<int64_t>(extra[k]->size())}));
      std::copy(extra[k]->begin(), extra[k]->end(), t->mutable_data<int64_t>().begin());
    }
    return {};
  }

 private:
  bool has_axis_;
  int64_t axis_;
  bool sorted_;
};

}  // namespace

Expected<KernelPtr> make_unique_op(const Node& node, int64_t) {
  return KernelPtr(new UniqueKernel(node.attribute("axis") != nullptr, attr_int(node, "axis", 0),
                                    attr_int(node, "sorted", 1) != 0));
}

}  // namespace reduce::ref
