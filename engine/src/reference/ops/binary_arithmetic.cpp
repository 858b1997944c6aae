// Add, Sub, Mul, Div with broadcasting; half types computed in float and rounded once.
#include <type_traits>

#include "../broadcast.h"
#include "../kernel.h"
#include "../numeric.h"

namespace reduce::ref {

namespace {

enum class Arith { Add, Sub, Mul, Div };

template <typename T>
Status apply(Arith op, const Tensor& a, const Tensor& b, Tensor& out) {
  auto x = a.data<T>();
  auto y = b.data<T>();
  auto z = out.mutable_data<T>();
  Status status;
  for_each_broadcast2(out.shape(), a.shape(), b.shape(), [&](size_t o, size_t i, size_t j) {
    switch (op) {
      case Arith::Add: z[o] = static_cast<T>(x[i] + y[j]); break;
      case Arith::Sub: z[o] = static_cast<T>(x[i] - y[j]); break;
      case Arith::Mul: z[o] = static_cast<T>(x[i] * y[j]); break;
      case Arith::Div:
        if constexpr (std::is_integral_v<T>) {
          if (y[j] == 0) {
            status = make_error("integer division by zero");
            z[o] = 0;
            break;
          }
        }
        z[o] = static_cast<T>(x[i] / y[j]);
        break;
    }
  });
  return status;
}

class ArithmeticKernel : public Kernel {
 public:
  explicit ArithmeticKernel(Arith op) : op_(op) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    if (a.dtype() != b.dtype())
      return make_error("inputs have different types (" + std::string(dtype_name(a.dtype())) + " and " +
                        std::string(dtype_name(b.dtype())) + ")");
    const Shape shapes[] = {a.shape(), b.shape()};
    REDUCE_ASSIGN(Shape shape, broadcast_shapes(shapes));
    const DType dtype = a.dtype();
    REDUCE_ASSIGN(Tensor wa, widen(a));
    REDUCE_ASSIGN(Tensor wb, widen(b));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wa.dtype(), shape));
    Status s = visit_dtype(wa.dtype(), [&]<typename T>() -> Status {
      if constexpr (std::is_same_v<T, bool>) return make_error("bool inputs are not supported");
      else return apply<T>(op_, wa, wb, out);
    });
    REDUCE_TRY(s);
    REDUCE_ASSIGN(Tensor result, narrow(out, dtype));
    ctx.set_output(0, std::move(result));
    return {};
  }

 private:
  Arith op_;
};

}  // namespace

Expected<KernelPtr> make_add(const Node&, int64_t) { return KernelPtr(new ArithmeticKernel(Arith::Add)); }
Expected<KernelPtr> make_sub(const Node&, int64_t) { return KernelPtr(new ArithmeticKernel(Arith::Sub)); }
Expected<KernelPtr> make_mul(const Node&, int64_t) { return KernelPtr(new ArithmeticKernel(Arith::Mul)); }
Expected<KernelPtr> make_div(const Node&, int64_t) { return KernelPtr(new ArithmeticKernel(Arith::Div)); }

}  // namespace reduce::ref
