// Comparisons with broadcasting, giving bool: Equal, Greater, GreaterOrEqual, Less, LessOrEqual.
#include <type_traits>

#include "reference/elementwise.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

enum class Cmp { Equal, Greater, GreaterOrEqual, Less, LessOrEqual };

template <typename T>
void apply(Cmp op, const Tensor& a, const Tensor& b, const BinaryShapes& s, Tensor& out) {
  auto x = a.data<T>();
  auto y = b.data<T>();
  auto z = out.mutable_data<uint8_t>();
  auto run = [&](auto f) { map_binary(x, a.shape(), y, s.b, z, s.out, f); };
  switch (op) {
    case Cmp::Equal: return run([](T p, T q) -> uint8_t { return p == q; });
    case Cmp::Greater: return run([](T p, T q) -> uint8_t { return p > q; });
    case Cmp::GreaterOrEqual: return run([](T p, T q) -> uint8_t { return p >= q; });
    case Cmp::Less: return run([](T p, T q) -> uint8_t { return p < q; });
    case Cmp::LessOrEqual: return run([](T p, T q) -> uint8_t { return p <= q; });
  }
}

class CompareKernel : public Kernel {
 public:
  CompareKernel(Cmp op, LegacyBroadcast legacy) : op_(op), legacy_(legacy) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    REDUCE_TRY(check_same_type(a, b));
    if (dtype_size(a.dtype()) == 0) return make_error(std::string(dtype_name(a.dtype())) + " inputs are not supported");
    REDUCE_ASSIGN(BinaryShapes shapes, binary_shapes(a.shape(), b.shape(), legacy_));
    REDUCE_ASSIGN(Tensor wa, widen(a));
    REDUCE_ASSIGN(Tensor wb, widen(b));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(DType::Bool, shapes.out));
    if (wa.dtype() == DType::Bool) {
      // Bools are compared as stored bytes normalized to 0/1 (a byte other than 0/1 is still true).
      REDUCE_ASSIGN(Tensor na, normalized_bools(wa));
      REDUCE_ASSIGN(Tensor nb, normalized_bools(wb));
      apply<uint8_t>(op_, na, nb, shapes, out);
    } else {
      visit_dtype(wa.dtype(), [&]<typename T>() {
        if constexpr (!std::is_same_v<T, bool>) apply<T>(op_, wa, wb, shapes, out);
      });
    }
    ctx.set_output(0, std::move(out));
    return {};
  }

 private:
  static Expected<Tensor> normalized_bools(const Tensor& t) {
    REDUCE_ASSIGN(Tensor n, Tensor::allocate(DType::Bool, t.shape()));
    map_unary(t.data<uint8_t>(), n.mutable_data<uint8_t>(), [](uint8_t v) -> uint8_t { return v != 0; });
    return n;
  }

  Cmp op_;
  LegacyBroadcast legacy_;
};

KernelPtr compare(Cmp op, const Node& n, int64_t opset) { return KernelPtr(new CompareKernel(op, legacy_broadcast(n, opset))); }

}  // namespace

Expected<KernelPtr> make_equal(const Node& n, int64_t v) { return compare(Cmp::Equal, n, v); }
Expected<KernelPtr> make_greater(const Node& n, int64_t v) { return compare(Cmp::Greater, n, v); }
Expected<KernelPtr> make_greater_or_equal(const Node& n, int64_t v) { return compare(Cmp::GreaterOrEqual, n, v); }
Expected<KernelPtr> make_less(const Node& n, int64_t v) { return compare(Cmp::Less, n, v); }
Expected<KernelPtr> make_less_or_equal(const Node& n, int64_t v) { return compare(Cmp::LessOrEqual, n, v); }

}  // namespace reduce::ref
