// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two dims, zeroing the rest.
#include <cstring>

#include "reference/int_input.h"
#include "reference/kernel.h"

namespace reduce::ref {

namespace {

class TriluKernel : public Kernel {
 public:
  explicit TriluKernel(bool upper) : upper_(upper) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    if (in.rank() < 2) return make_error("Trilu needs rank 2 or more, got " + shape_to_string(in.shape()));
    int64_t k = 0;
    if (ctx.input(1)) {
      REDUCE_ASSIGN(k, int_scalar(*ctx.input(1), "k"));
    }
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, in.dtype(), in.shape()));
    const int64_t rows = in.shape()[in.rank() - 2], cols = in.shape()[in.rank() - 1];
    const size_t es = dtype_size(in.dtype());
    const size_t matrices = rows > 0 && cols > 0 ? in.elements() / static_cast<size_t>(rows * cols) : 0;
    const std::byte* src = in.bytes().data();
    std::byte* dst = out->mutable_bytes().data();  // zero-filled by allocation
    for (size_t m = 0; m < matrices; ++m)
      for (int64_t i = 0; i < rows; ++i) {
        // Columns kept in row i: [max(0, i + k), cols) for upper, [0, min(cols, i + k + 1)) for lower.
        // Clamped in 128 bits: k comes from data and may be extreme.
        const __int128 edge = static_cast<__int128>(i) + k + (upper_ ? 0 : 1);
        const int64_t e = static_cast<int64_t>(edge < 0 ? 0 : edge > cols ? cols : edge);
        const int64_t begin = upper_ ? e : 0, end = upper_ ? cols : e;
        if (end <= begin) continue;
        const size_t row = (m * static_cast<size_t>(rows) + static_cast<size_t>(i)) * static_cast<size_t>(cols);
        std::memcpy(dst + (row + static_cast<size_t>(begin)) * es, src + (row + static_cast<size_t>(begin)) * es,
                    static_cast<size_t>(end - begin) * es);
      }
    return {};
  }

 private:
  bool upper_;
};

}  // namespace

Expected<KernelPtr> make_trilu(const Node& node, int64_t) {
  const int64_t upper = attr_int(node, "upper", 1);
  if (upper != 0 && upper != 1) return make_error("upper must be 0 or 1");
  return KernelPtr(new TriluKernel(upper == 1));
}

}  // namespace reduce::ref
