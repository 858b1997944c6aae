// Add, Sub, Mul, Div with broadcasting (legacy attributes before opset 7); half types computed in float
// and rounded once; integers wrap on overflow and integer division truncates.
#include <type_traits>

#include "reference/elementwise.h"
#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

enum class Arith { Add, Sub, Mul, Div };

template <typename T>
void apply(Arith op, const Tensor& a, const Tensor& b, const BinaryShapes& shapes, Tensor& out) {
  auto x = a.data<T>();
  auto y = b.data<T>();
  auto z = out.mutable_data<T>();
  auto run = [&](auto f) { map_binary(x, a.shape(), y, shapes.b, z, shapes.out, f); };
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case Arith::Add: run([](T p, T q) { return wrap_add(p, q); }); break;
      case Arith::Sub: run([](T p, T q) { return wrap_sub(p, q); }); break;
      case Arith::Mul: run([](T p, T q) { return wrap_mul(p, q); }); break;
      case Arith::Div: run([](T p, T q) { return wrap_div(p, q); }); break;
    }
  } else {
    switch (op) {
      case Arith::Add: run([](T p, T q) { return p + q; }); break;
      case Arith::Sub: run([](T p, T q) { return p - q; }); break;
      case Arith::Mul: run([](T p, T q) { return p * q; }); break;
      case Arith::Div: run([](T p, T q) { return p / q; }); break;
    }
  }
}

class ArithmeticKernel : public Kernel {
 public:
  ArithmeticKernel(Arith op, LegacyBroadcast legacy) : op_(op), legacy_(legacy) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    REDUCE_TRY(check_same_type(a, b));
    const DType dtype = a.dtype();
    if (dtype == DType::Bool || dtype_size(dtype) == 0 || dtype == DType::Complex64 || dtype == DType::Complex128)
      return make_error(std::string(dtype_name(dtype)) + " inputs are not supported");
    REDUCE_ASSIGN(BinaryShapes shapes, binary_shapes(a.shape(), b.shape(), legacy_));
    REDUCE_ASSIGN(Tensor wa, widen(a));
    REDUCE_ASSIGN(Tensor wb, widen(b));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate_uninitialized(wa.dtype(), shapes.out));
    Status s = visit_dtype(wa.dtype(), [&]<typename T>() -> Status {
      if constexpr (std::is_same_v<T, bool>) {
        return make_error("bool inputs are not supported");
      } else {
        if constexpr (std::is_integral_v<T>) {
          if (op_ == Arith::Div && !all_nonzero(wb.data<T>())) return make_error("integer division by zero");
        }
        apply<T>(op_, wa, wb, shapes, out);
        return {};
      }
    });
    REDUCE_TRY(s);
    REDUCE_ASSIGN(Tensor result, narrow(out, dtype));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  Arith op_;
  LegacyBroadcast legacy_;
};

}  // namespace

Expected<KernelPtr> make_add(const Node& n, int64_t v) { return KernelPtr(new ArithmeticKernel(Arith::Add, legacy_broadcast(n, v))); }
Expected<KernelPtr> make_sub(const Node& n, int64_t v) { return KernelPtr(new ArithmeticKernel(Arith::Sub, legacy_broadcast(n, v))); }
Expected<KernelPtr> make_mul(const Node& n, int64_t v) { return KernelPtr(new ArithmeticKernel(Arith::Mul, legacy_broadcast(n, v))); }
Expected<KernelPtr> make_div(const Node& n, int64_t v) { return KernelPtr(new ArithmeticKernel(Arith::Div, legacy_broadcast(n, v))); }

}  // namespace reduce::ref
