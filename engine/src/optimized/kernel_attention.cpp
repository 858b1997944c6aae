// Attention (pass attention-fusion): P = softmax(scale(A x B)) over the last axis, then P x V, with
// the reference MatMul for both products and the scores kept in float inside the kernel.
// Fault attention-unstable-softmax: exp without subtracting the row max, so rows whose logits exceed
// ~88 overflow to Inf and divide to NaN.
#include <cmath>
#include <limits>

#include "fused_kernel.h"
#include "reference/parallel.h"

namespace reduce::opt {

namespace {

enum class ScaleOp : int64_t { None = 0, Multiply = 1, Divide = 2 };

class AttentionKernel : public Kernel {
 public:
  AttentionKernel(KernelPtr scores, KernelPtr weighted, ScaleOp scale_op, bool unstable)
      : scores_(std::move(scores)), weighted_(std::move(weighted)), scale_op_(scale_op), unstable_(unstable) {}

  // Inputs: A, B, V, scale (a one-element float constant, or absent).
  Status compute(KernelContext& ctx) const override {
    if (!ctx.input(0) || !ctx.input(1) || !ctx.input(2)) return make_error("Attention: missing input");
    REDUCE_ASSIGN(Tensor scores, run_part(*scores_, {ctx.input(0), ctx.input(1)},
                                          {ctx.input_is_constant(0), ctx.input_is_constant(1)}));
    if (scores.dtype() != DType::Float) return make_error("Attention: scores must be float");
    if (scores.rank() == 0) return make_error("Attention: scores have no axis");
    REDUCE_ASSIGN(scores, writable(std::move(scores)));
    float scale = 1.0f;
    if (scale_op_ != ScaleOp::None) {
      const Tensor* s = ctx.input(3);
      if (!s || s->dtype() != DType::Float || s->elements() != 1) return make_error("Attention: scale must be one float");
      scale = s->data<float>()[0];
    }
    const size_t n = static_cast<size_t>(scores.shape().back());
    const size_t rows = n ? static_cast<size_t>(scores.elements()) / n : 0;
    float* data = scores.mutable_data<float>().data();
    ref::parallel_for(rows, 64, [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) softmax_row(data + r * n, n, scale);
    });
    REDUCE_ASSIGN(Tensor out, run_part(*weighted_, {&scores, ctx.input(2)}, {false, ctx.input_is_constant(2)}));
    ctx.set_output(0, std::move(out));
    return {};
  }

 private:
  void softmax_row(float* x, size_t n, float scale) const {
    for (size_t j = 0; j < n; ++j) {
      if (scale_op_ == ScaleOp::Multiply) x[j] = x[j] * scale;
      if (scale_op_ == ScaleOp::Divide) x[j] = x[j] / scale;
    }
    softmax_scores(x, n, unstable_);
  }

  KernelPtr scores_;    // A x B
  KernelPtr weighted_;  // P x V (its own kernel, so each caches its constant operand)
  ScaleOp scale_op_;
  bool unstable_;
};

}  // namespace

Expected<KernelPtr> make_attention(const FusedKernelSpec& spec) {
  const Attribute* op = spec.node.attribute("scale_op");
  const int64_t scale_op = op ? op->i : 0;
  if (scale_op < 0 || scale_op > 2) return make_error("Attention: bad scale_op");
  Node matmul;
  matmul.op_type = "MatMul";
  REDUCE_ASSIGN(KernelPtr scores, make_reference_kernel(matmul, spec.opset));
  REDUCE_ASSIGN(KernelPtr weighted, make_reference_kernel(matmul, spec.opset));
  return KernelPtr(new AttentionKernel(std::move(scores), std::move(weighted), static_cast<ScaleOp>(scale_op),
                                       spec.options.has(Fault::AttentionUnstableSoftmax)));
}

}  // namespace reduce::opt
