// CausalConvWithState (opset 27): depthwise causal 1-d convolution over [B, C, L] that continues from the
// last K-1 inputs of the previous call (past_state) and returns the new last K-1 (present_state).
#include <algorithm>
#include <cmath>

#include "reference/float_values.h"
#include "reference/kernel.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

class CausalConvWithStateKernel : public Kernel {
 public:
  explicit CausalConvWithStateKernel(bool silu) : silu_(silu) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor* bias = ctx.input(2);
    const Tensor* past = ctx.input(3);
    if (x.rank() != 3) return make_error("input must be [B, C, L], got " + shape_to_string(x.shape()));
    const int64_t B = x.shape()[0], C = x.shape()[1], L = x.shape()[2];
    if (w.rank() != 3 || w.shape()[0] != C || w.shape()[1] != 1 || w.shape()[2] < 1)
      return make_error("weight must be [C, 1, K] with C = " + std::to_string(C) + ", got " + shape_to_string(w.shape()));
    const int64_t K = w.shape()[2];
    const Shape state_shape{B, C, K - 1};
    if (bias && bias->shape() != Shape{C}) return make_error("bias must have shape [" + std::to_string(C) + "]");
    if (past && past->shape() != state_shape)
      return make_error("past_state must have shape " + shape_to_string(state_shape) + ", got " + shape_to_string(past->shape()));
    for (const Tensor* t : {&w, bias, past})
      if (t && t->dtype() != x.dtype()) return make_error("weight, bias and past_state must have the type of input");
    // The padded sequence (state then input) of every channel, as doubles.
    const size_t rows = static_cast<size_t>(B * C), n = static_cast<size_t>(L), k = static_cast<size_t>(K);
    REDUCE_ASSIGN(uint64_t state_elements, element_count(state_shape));
    REDUCE_TRY(ctx.reserve((2 * x.elements() + w.elements() + 3 * state_elements) * sizeof(double)));
    REDUCE_ASSIGN(std::vector<double> xv, float_values(x, "input"));
    REDUCE_ASSIGN(std::vector<double> wv, float_values(w, "weight"));
    std::vector<double> bv(static_cast<size_t>(C), 0.0), pv(rows * (k - 1), 0.0);
    if (bias) {
      REDUCE_ASSIGN(bv, float_values(*bias, "bias"));
    }
    if (past) {
      REDUCE_ASSIGN(pv, float_values(*past, "past_state"));
    }
    std::vector<double> out(rows * n), present(rows * (k - 1));
    const size_t work_rows = out.empty() && present.empty() ? 0 : rows;  // nothing to compute for empty outputs
    parallel_for(work_rows, std::max<size_t>(1, 16384 / (n + k)), [&](size_t begin, size_t end) {
      std::vector<double> padded(n + k - 1);
      for (size_t r = begin; r < end; ++r) {
        const size_t c = r % static_cast<size_t>(C);
        std::copy_n(pv.begin() + static_cast<std::ptrdiff_t>(r * (k - 1)), k - 1, padded.begin());
        std::copy_n(xv.begin() + static_cast<std::ptrdiff_t>(r * n), n, padded.begin() + static_cast<std::ptrdiff_t>(k - 1));
        for (size_t t = 0; t < n; ++t) {
          double y = bv[c];
          for (size_t j = 0; j < k; ++j) y += wv[c * k + j] * padded[t + j];
          out[r * n + t] = silu_ ? y / (1.0 + std::exp(-y)) : y;
        }
        std::copy_n(padded.begin() + static_cast<std::ptrdiff_t>(n), k - 1,
                    present.begin() + static_cast<std::ptrdiff_t>(r * (k - 1)));
      }
    });
    REDUCE_ASSIGN(Tensor y, tensor_from_doubles(x.dtype(), x.shape(), out));
    ctx.set_output(0, std::move(y));
    if (ctx.output_count() > 1) {
      REDUCE_ASSIGN(Tensor s, tensor_from_doubles(x.dtype(), state_shape, present));
      ctx.set_output(1, std::move(s));
    }
    return {};
  }

 private:
  bool silu_;  // silu (alias swish) applied to the convolution, or none
};

}  // namespace

Expected<KernelPtr> make_causal_conv_with_state(const Node& node, int64_t) {
  const std::string activation = attr_string(node, "activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish")
    return make_error("activation must be none, silu or swish, got '" + activation + "'");
  return KernelPtr(new CausalConvWithStateKernel(activation != "none"));
}

}  // namespace reduce::ref
