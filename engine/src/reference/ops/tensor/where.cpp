// Where: picks X or Y by a bool condition, the three broadcast together. Values are copied as raw
// elements of their size, so every dtype (half types included) is selected exactly.
#include <cstring>

#include "reference/elementwise.h"
#include "reference/kernel.h"

namespace reduce::ref {

namespace {

template <typename E>
void select(const Tensor& c, const Tensor& x, const Tensor& y, Tensor& out) {
  const BroadcastRuns<3> runs(out.shape(), {c.shape(), x.shape(), y.shape()});
  const uint8_t* cond = c.data<uint8_t>().data();
  const E* xs = x.data<E>().data();
  const E* ys = y.data<E>().data();
  E* z = out.mutable_data<E>().data();
  parallel_for(runs.elements(), kElementwiseGrain, [&](size_t begin, size_t end) {
    runs.for_each_run(begin, end, [&](size_t o, const auto& off, const auto& step, size_t n) {
      for (size_t k = 0; k < n; ++k)
        z[o + k] = cond[off[0] + k * step[0]] ? xs[off[1] + k * step[1]] : ys[off[2] + k * step[2]];
    });
  });
}

class WhereKernel : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& c = *ctx.input(0);
    const Tensor& x = *ctx.input(1);
    const Tensor& y = *ctx.input(2);
    if (c.dtype() != DType::Bool) return make_error("condition must be bool, got " + std::string(dtype_name(c.dtype())));
    if (x.dtype() != y.dtype())
      return make_error("X and Y have different types (" + std::string(dtype_name(x.dtype())) + " and " +
                        std::string(dtype_name(y.dtype())) + ")");
    const size_t size = dtype_size(x.dtype());
    if (size != 1 && size != 2 && size != 4 && size != 8)
      return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    const Shape shapes[] = {c.shape(), x.shape(), y.shape()};
    REDUCE_ASSIGN(Shape shape, broadcast_shapes(shapes));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(x.dtype(), shape));
    switch (size) {
      case 1: select<uint8_t>(c, x, y, out); break;
      case 2: select<uint16_t>(c, x, y, out); break;
      case 4: select<uint32_t>(c, x, y, out); break;
      default: select<uint64_t>(c, x, y, out); break;
    }
    ctx.set_output(0, std::move(out));
    return {};
  }
};

}  // namespace

Expected<KernelPtr> make_where(const Node&, int64_t) { return KernelPtr(new WhereKernel()); }

}  // namespace reduce::ref
