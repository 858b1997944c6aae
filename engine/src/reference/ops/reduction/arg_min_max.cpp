// ArgMax, ArgMin: int64 index of the extreme value along one axis (first or last occurrence).
#include <cmath>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

class ArgKernel : public Kernel {
 public:
  ArgKernel(bool max, int64_t axis, bool keepdims, bool last) : max_(max), axis_(axis), keepdims_(keepdims), last_(last) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (x.rank() == 0) return make_error("input must have rank at least 1");
    REDUCE_ASSIGN(size_t axis, normalize_axis(axis_, x.rank()));
    const Shape& s = x.shape();
    if (s[axis] == 0) return make_error("cannot take the index of an extreme over an empty axis");
    if (x.dtype() == DType::Bool || dtype_size(x.dtype()) == 0 || x.dtype() == DType::Complex64 ||
        x.dtype() == DType::Complex128)
      return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    size_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(s[d]);
    for (size_t d = axis + 1; d < s.size(); ++d) inner *= static_cast<size_t>(s[d]);
    const size_t n = static_cast<size_t>(s[axis]);
    Shape out_shape;
    for (size_t d = 0; d < s.size(); ++d) {
      if (d != axis) out_shape.push_back(s[d]);
      else if (keepdims_) out_shape.push_back(1);
    }
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor* out, ctx.allocate_output(0, DType::Int64, out_shape));
    int64_t* o = out->mutable_data<int64_t>().data();
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) {
        const T* in = wx.data<T>().data();
        parallel_for(outer * inner, std::max<size_t>(1, 65536 / n), [&](size_t b, size_t e) {
          for (size_t i = b; i < e; ++i) {
            const T* p = in + (i / inner) * n * inner + (i % inner);
            size_t best = 0;
            for (size_t k = 1; k < n; ++k) {
              const T v = p[k * inner], cur = p[best * inner];
              // A tie moves the answer only when the last occurrence is asked for.
              const bool better = max_ ? (v > cur || (last_ && v == cur)) : (v < cur || (last_ && v == cur));
              if (better) best = k;
            }
            o[i] = static_cast<int64_t>(best);
          }
        });
      }
    });
    return {};
  }

 private:
  bool max_;
  int64_t axis_;
  bool keepdims_;
  bool last_;
};

Expected<KernelPtr> make_arg(bool max, const Node& node) {
  const int64_t keepdims = attr_int(node, "keepdims", 1);
  const int64_t last = attr_int(node, "select_last_index", 0);
  if ((keepdims != 0 && keepdims != 1) || (last != 0 && last != 1))
    return make_error("keepdims and select_last_index must be 0 or 1");
  return KernelPtr(new ArgKernel(max, attr_int(node, "axis", 0), keepdims == 1, last == 1));
}

}  // namespace

Expected<KernelPtr> make_arg_max(const Node& node, int64_t) { return make_arg(true, node); }
Expected<KernelPtr> make_arg_min(const Node& node, int64_t) { return make_arg(false, node); }

}  // namespace reduce::ref
