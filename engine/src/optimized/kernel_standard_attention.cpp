// StandardAttention (pass attention-fusion): the ONNX Attention op (opsets 23+) as an engine's fused
// attention kernel (float; other types get the reference op's results). The reference op gives the masked, scaled, soft-capped scores
// (qk_matmul_output_mode 2) and the present key/value caches; the softmax and the weighted sum of
// the values are this kernel's own, so that the attention faults act where they do in real kernels.
// Fault attention-unstable-softmax: exp without subtracting the row max (Inf/NaN above ~88).
#include <cmath>
#include <limits>

#include "fused_kernel.h"
#include "reference/parallel.h"

namespace reduce::opt {

namespace {

// Outputs of the reference run: Y (unused: this kernel recomputes it), present K, present V, scores.
constexpr size_t kPresentKey = 1, kPresentValue = 2, kScores = 3;

// The reference op's run inside the kernel: its scores are the largest tensor the kernel makes, so
// what it reserves counts against the run's budget (unlike the small parts of other fused kernels).
class BudgetedContext : public ChainContext {
 public:
  BudgetedContext(KernelContext& outer, std::vector<const Tensor*> inputs, std::vector<bool> constant, size_t outputs)
      : ChainContext(std::move(inputs), std::move(constant), outputs), outer_(outer) {}
  Status reserve(uint64_t bytes) override { return outer_.reserve(bytes); }

 private:
  KernelContext& outer_;
};

class StandardAttentionKernel : public Kernel {
 public:
  StandardAttentionKernel(KernelPtr scores, bool unstable) : scores_(std::move(scores)), unstable_(unstable) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor* q = ctx.input(0);
    if (!q) return make_error("StandardAttention: missing Q");
    std::vector<const Tensor*> inputs;
    std::vector<bool> constant;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      inputs.push_back(ctx.input(i));
      constant.push_back(ctx.input_is_constant(i));
    }
    BudgetedContext part(ctx, std::move(inputs), std::move(constant), 4);
    REDUCE_TRY(scores_->compute(part));
    // The pass fuses nodes whose type it could not infer: other types keep the reference op's results.
    if (q->dtype() != DType::Float) return forward_reference(part, ctx);
    REDUCE_ASSIGN(Tensor present_v, part.take_output(kPresentValue));
    REDUCE_ASSIGN(Tensor scores, part.take_output(kScores));
    REDUCE_ASSIGN(scores, writable(std::move(scores)));
    // scores [B, q_heads, q_len, total], present V [B, kv_heads, total, v_head].
    const Shape& s = scores.shape();
    const Shape& pv = present_v.shape();
    if (s.size() != 4 || pv.size() != 4 || pv[2] != s[3] || pv[1] == 0 || s[1] % pv[1] != 0)
      return make_error("StandardAttention: unexpected scores " + shape_to_string(s) + " or values " + shape_to_string(pv));
    const auto batch = static_cast<size_t>(s[0]), heads = static_cast<size_t>(s[1]), len = static_cast<size_t>(s[2]),
               total = static_cast<size_t>(s[3]), kv_heads = static_cast<size_t>(pv[1]), width = static_cast<size_t>(pv[3]);
    // Y keeps Q's layout: 3-D [B, q_len, heads * v_head], 4-D [B, heads, q_len, v_head].
    const bool three_d = q->rank() == 3;
    const auto dim = [](size_t n) { return static_cast<int64_t>(n); };
    const Shape y_shape = three_d ? Shape{s[0], s[2], dim(heads * width)} : Shape{s[0], s[1], s[2], dim(width)};
    REDUCE_ASSIGN(Tensor * y, ctx.allocate_output(0, DType::Float, y_shape));
    float* p = scores.mutable_data<float>().data();
    const float* v = present_v.data<float>().data();
    float* out = y->mutable_data<float>().data();
    // Rows are independent (each writes its own Y row): the same bits for any thread count.
    ref::parallel_for(batch * heads * len, 16, [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) {
        const size_t b = r / (heads * len), h = r / len % heads, i = r % len;
        float* row = p + r * total;
        softmax_row(row, total);
        const float* vh = v + (b * kv_heads + h / (heads / kv_heads)) * total * width;
        float* yr = out + (three_d ? ((b * len + i) * heads + h) * width : r * width);
        for (size_t c = 0; c < width; ++c) {
          double acc = 0;
          for (size_t j = 0; j < total; ++j) acc += static_cast<double>(row[j]) * vh[j * width + c];
          yr[c] = static_cast<float>(acc);
        }
      }
    });
    if (ctx.output_count() > kPresentKey) {
      REDUCE_ASSIGN(Tensor present_k, part.take_output(kPresentKey));
      ctx.set_output(kPresentKey, std::move(present_k));
    }
    if (ctx.output_count() > kPresentValue) ctx.set_output(kPresentValue, std::move(present_v));
    return {};
  }

 private:
  static Status forward_reference(ChainContext& part, KernelContext& ctx) {
    for (size_t i = 0; i < ctx.output_count() && i < kScores; ++i) {
      REDUCE_ASSIGN(Tensor out, part.take_output(i));
      ctx.set_output(i, std::move(out));
    }
    return {};
  }

  void softmax_row(float* x, size_t n) const {
    float max = -std::numeric_limits<float>::infinity();
    for (size_t j = 0; j < n; ++j) max = std::max(max, x[j]);
    // A row whose mask hides every key attends to nothing (zeros), as the op specifies.
    if (max == -std::numeric_limits<float>::infinity()) {
      std::fill(x, x + n, 0.0f);
      return;
    }
    softmax_scores(x, n, unstable_);
  }

  KernelPtr scores_;  // the reference Attention asked for its biased scores
  bool unstable_;
};

}  // namespace

Expected<KernelPtr> make_standard_attention(const FusedKernelSpec& spec) {
  if (spec.parts.size() != 1) return make_error("StandardAttention replaces one Attention node");
  // The same node with every output named and the scores taken after mask and softcap.
  Node reference = spec.parts[0];
  reference.outputs = {"y", "present_key", "present_value", "scores"};
  std::erase_if(reference.attributes, [](const Attribute& a) { return a.name == "qk_matmul_output_mode"; });
  Attribute mode;
  mode.name = "qk_matmul_output_mode";
  mode.kind = Attribute::Kind::Int;
  mode.i = 2;
  reference.attributes.push_back(mode);
  REDUCE_ASSIGN(KernelPtr scores, make_reference_kernel(reference, spec.opset));
  return KernelPtr(new StandardAttentionKernel(std::move(scores), spec.options.has(Fault::AttentionUnstableSoftmax)));
}

}  // namespace reduce::opt
