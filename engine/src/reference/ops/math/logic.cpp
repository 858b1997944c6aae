// Boolean logic: And, Or, Xor with broadcasting (legacy attributes before opset 7), and Not.
#include "reference/elementwise.h"
#include "reference/kernel.h"

namespace reduce::ref {

namespace {

enum class Logic { And, Or, Xor };

Status require_bool(const Tensor& t) {
  if (t.dtype() != DType::Bool) return make_error("inputs must be bool, got " + std::string(dtype_name(t.dtype())));
  return {};
}

// Stored bool bytes other than 0/1 count as true, so every result is a clean 0 or 1.
class LogicKernel : public Kernel {
 public:
  LogicKernel(Logic op, LegacyBroadcast legacy) : op_(op), legacy_(legacy) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    REDUCE_TRY(require_bool(a));
    REDUCE_TRY(require_bool(b));
    REDUCE_ASSIGN(BinaryShapes s, binary_shapes(a.shape(), b.shape(), legacy_));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(DType::Bool, s.out));
    auto x = a.data<uint8_t>();
    auto y = b.data<uint8_t>();
    auto z = out.mutable_data<uint8_t>();
    auto run = [&](auto f) { map_binary(x, a.shape(), y, s.b, z, s.out, f); };
    switch (op_) {
      case Logic::And: run([](uint8_t p, uint8_t q) -> uint8_t { return p != 0 && q != 0; }); break;
      case Logic::Or: run([](uint8_t p, uint8_t q) -> uint8_t { return p != 0 || q != 0; }); break;
      case Logic::Xor: run([](uint8_t p, uint8_t q) -> uint8_t { return (p != 0) != (q != 0); }); break;
    }
    ctx.set_output(0, std::move(out));
    return {};
  }

 private:
  Logic op_;
  LegacyBroadcast legacy_;
};

class NotKernel : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    REDUCE_TRY(require_bool(x));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(DType::Bool, x.shape()));
    map_unary(x.data<uint8_t>(), out.mutable_data<uint8_t>(), [](uint8_t v) -> uint8_t { return v == 0; });
    ctx.set_output(0, std::move(out));
    return {};
  }
};

}  // namespace

Expected<KernelPtr> make_and(const Node& n, int64_t v) { return KernelPtr(new LogicKernel(Logic::And, legacy_broadcast(n, v))); }
Expected<KernelPtr> make_or(const Node& n, int64_t v) { return KernelPtr(new LogicKernel(Logic::Or, legacy_broadcast(n, v))); }
Expected<KernelPtr> make_xor(const Node& n, int64_t v) { return KernelPtr(new LogicKernel(Logic::Xor, legacy_broadcast(n, v))); }
Expected<KernelPtr> make_not(const Node&, int64_t) { return KernelPtr(new NotKernel()); }

}  // namespace reduce::ref
