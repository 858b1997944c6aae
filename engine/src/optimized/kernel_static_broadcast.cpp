// StaticBroadcast (pass static-broadcast): float Add/Sub/Mul/Div specialized at prepare time for the
// static operand shapes (per-operand strides precomputed, 0 on broadcast dims); operands of other
// shapes at run time go to the generic reference kernel.
// Fault broadcast-batch1: a rank-4 operand broadcast over channels (dim1 == 1 < output dim1) gets
// stride 1 instead of 0 on the channel dim, so channel c reads the operand shifted by c elements
// (wrapping inside the operand, never outside it).
#include "fused_kernel.h"
#include "reference/parallel.h"
#include "static_broadcast.h"

namespace reduce::opt {

namespace {

enum class Arith { Add, Sub, Mul, Div };

struct OperandPlan {
  std::vector<size_t> stride;  // per output dim
  size_t elements = 1;
};

OperandPlan plan_operand(const Shape& shape, const Shape& out, bool channel_fault) {
  OperandPlan p;
  p.stride.assign(out.size(), 0);
  size_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    const size_t od = d + out.size() - shape.size();
    p.stride[od] = shape[d] == 1 ? 0 : step;
    step *= static_cast<size_t>(shape[d]);
  }
  p.elements = step;
  if (channel_fault) p.stride[1] = 1;
  return p;
}

class StaticBroadcastKernel : public Kernel {
 public:
  StaticBroadcastKernel(Arith op, Shape a, Shape b, Shape out, bool fault, KernelPtr generic)
      : op_(op), a_shape_(std::move(a)), b_shape_(std::move(b)), out_(std::move(out)), generic_(std::move(generic)) {
    a_ = plan_operand(a_shape_, out_, fault && broadcast_batch1_triggers(a_shape_, b_shape_, 0));
    b_ = plan_operand(b_shape_, out_, fault && broadcast_batch1_triggers(a_shape_, b_shape_, 1));
    wrap_ = fault && (broadcast_batch1_triggers(a_shape_, b_shape_, 0) || broadcast_batch1_triggers(a_shape_, b_shape_, 1));
  }

  Status compute(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || !b || a->dtype() != DType::Float || b->dtype() != DType::Float || a->shape() != a_shape_ ||
        b->shape() != b_shape_) {
      return generic_->compute(ctx);  // not the shapes this kernel was built for
    }
    REDUCE_ASSIGN(Tensor* y, ctx.allocate_output(0, DType::Float, out_));
    const float* pa = a->data<float>().data();
    const float* pb = b->data<float>().data();
    float* py = y->mutable_data<float>().data();
    const size_t inner = static_cast<size_t>(out_.back());
    const size_t rows = inner ? static_cast<size_t>(y->elements()) / inner : 0;
    ref::parallel_for(rows, 256, [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) {
        // Offsets of the row's first element in each operand, from the row's multi-index.
        size_t rest = r, oa = 0, ob = 0;
        for (size_t d = out_.size() - 1; d-- > 0;) {
          const size_t i = rest % static_cast<size_t>(out_[d]);
          rest /= static_cast<size_t>(out_[d]);
          oa += i * a_.stride[d];
          ob += i * b_.stride[d];
        }
        const size_t sa = a_.stride.back(), sb = b_.stride.back();
        if (wrap_) {
          for (size_t j = 0; j < inner; ++j)
            py[r * inner + j] = apply(pa[(oa + j * sa) % a_.elements], pb[(ob + j * sb) % b_.elements]);
        } else {
          for (size_t j = 0; j < inner; ++j) py[r * inner + j] = apply(pa[oa + j * sa], pb[ob + j * sb]);
        }
      }
    });
    return {};
  }

 private:
  float apply(float x, float y) const {
    switch (op_) {
      case Arith::Add: return x + y;
      case Arith::Sub: return x - y;
      case Arith::Mul: return x * y;
      case Arith::Div: return x / y;
    }
    return 0;
  }

  Arith op_;
  Shape a_shape_, b_shape_, out_;
  OperandPlan a_, b_;
  bool wrap_ = false;  // the faulty stride may point past the operand: wrap inside it
  KernelPtr generic_;
};

}  // namespace

Expected<KernelPtr> make_static_broadcast(const FusedKernelSpec& spec) {
  const Attribute* a = spec.node.attribute("a_shape");
  const Attribute* b = spec.node.attribute("b_shape");
  if (spec.parts.size() != 1 || !a || !b) return make_error("StaticBroadcast needs its node and operand shapes");
  const std::string& op = spec.parts[0].op_type;
  const Arith arith = op == "Add" ? Arith::Add : op == "Sub" ? Arith::Sub : op == "Mul" ? Arith::Mul : Arith::Div;
  REDUCE_ASSIGN(KernelPtr generic, make_reference_kernel(spec.parts[0], spec.opset));
  // Shapes this kernel does not specialize (empty, not broadcastable) stay with the generic kernel.
  auto out = broadcast_shapes(a->ints, b->ints);
  bool specializable = out && !out->empty();
  for (int64_t d : out ? *out : Shape{}) specializable = specializable && d > 0;
  if (!specializable) return generic;
  return KernelPtr(new StaticBroadcastKernel(arith, a->ints, b->ints, *out, spec.options.has(Fault::BroadcastBatch1),
                                             std::move(generic)));
}

}  // namespace reduce::opt
