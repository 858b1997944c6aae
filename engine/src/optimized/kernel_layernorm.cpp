// LayerNorm (pass layernorm-fusion): y = (x - mean) / sqrt(var + eps) * gamma + beta over the last
// `axes` axes of a float tensor; mean and variance accumulate in double. Uncentered (`centered` 0,
// RMSNormalization) the mean is taken as 0: y = x / sqrt(mean(x^2) + eps) * gamma.
// Fault layernorm-drop-eps: divides by sqrt(var), so rows of zero variance (uncentered: all-zero
// rows) give 0/0 = NaN.
#include <cmath>

#include "fused_kernel.h"
#include "reference/parallel.h"

namespace reduce::opt {

namespace {

// `t` (gamma or beta) expanded to the normalized block `block` (the last dims of x), or an error.
Expected<std::vector<float>> expand_to_block(const Tensor* t, const Shape& block, size_t n) {
  if (!t) return std::vector<float>();
  if (t->dtype() != DType::Float) return make_error("gamma and beta must be float");
  const Shape& s = t->shape();
  Shape aligned(block.size(), 1);
  for (size_t d = 0; d < s.size(); ++d) {
    const size_t from_end = s.size() - d;
    if (from_end > block.size()) {
      if (s[d] != 1) return make_error("gamma/beta " + shape_to_string(s) + " does not fit the normalized axes");
      continue;
    }
    aligned[block.size() - from_end] = s[d];
  }
  std::vector<size_t> stride(block.size(), 0);
  size_t step = 1;
  for (size_t d = block.size(); d-- > 0;) {
    if (aligned[d] != 1 && aligned[d] != block[d])
      return make_error("gamma/beta " + shape_to_string(s) + " does not broadcast to " + shape_to_string(block));
    stride[d] = aligned[d] == 1 ? 0 : step;
    step *= static_cast<size_t>(aligned[d]);
  }
  auto src = t->data<float>();
  std::vector<float> out(n);
  std::vector<int64_t> idx(block.size(), 0);
  for (size_t j = 0; j < n; ++j) {
    size_t off = 0;
    for (size_t d = 0; d < block.size(); ++d) off += static_cast<size_t>(idx[d]) * stride[d];
    out[j] = src[off];
    for (size_t d = block.size(); d-- > 0;) {
      if (++idx[d] < block[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

class LayerNormKernel : public Kernel {
 public:
  LayerNormKernel(float eps, size_t axes, bool centered, bool drop_eps)
      : eps_(eps), axes_(axes), centered_(centered), drop_eps_(drop_eps) {}

  Status compute(KernelContext& ctx) const override {
    if (!ctx.input(0)) return make_error("LayerNorm: missing input");
    const Tensor& x = *ctx.input(0);
    if (x.dtype() != DType::Float) return make_error("LayerNorm: x must be float");
    if (x.rank() < axes_) return make_error("LayerNorm: x " + shape_to_string(x.shape()) + " has fewer than " + std::to_string(axes_) + " axes");
    const Shape block(x.shape().end() - static_cast<std::ptrdiff_t>(axes_), x.shape().end());
    size_t n = 1;
    for (int64_t d : block) n *= static_cast<size_t>(d);
    const size_t rows = n ? static_cast<size_t>(x.elements()) / n : 0;
    REDUCE_ASSIGN(std::vector<float> gamma, expand_to_block(ctx.input(1), block, n));
    REDUCE_ASSIGN(std::vector<float> beta, expand_to_block(ctx.input(2), block, n));
    REDUCE_ASSIGN(Tensor* y, ctx.allocate_output(0, DType::Float, x.shape()));
    const float* src = x.data<float>().data();
    float* dst = y->mutable_data<float>().data();
    const double eps = drop_eps_ ? 0.0 : static_cast<double>(eps_);
    ref::parallel_for(rows, 16, [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) normalize_row(src + r * n, dst + r * n, n, eps, centered_, gamma, beta);
    });
    return {};
  }

 private:
  static void normalize_row(const float* xr, float* yr, size_t n, double eps, bool centered,
                            const std::vector<float>& gamma, const std::vector<float>& beta) {
    double sum = 0;
    if (centered)
      for (size_t j = 0; j < n; ++j) sum += xr[j];
    const double mean = sum / static_cast<double>(n);
    double sq = 0;
    for (size_t j = 0; j < n; ++j) sq += (xr[j] - mean) * (xr[j] - mean);
    const double denom = std::sqrt(sq / static_cast<double>(n) + eps);
    for (size_t j = 0; j < n; ++j) {
      double v = (xr[j] - mean) / denom;
      if (!gamma.empty()) v *= gamma[j];
      if (!beta.empty()) v += beta[j];
      yr[j] = static_cast<float>(v);
    }
  }

  float eps_;
  size_t axes_;
  bool centered_;
  bool drop_eps_;
};

}  // namespace

Expected<KernelPtr> make_layernorm(const FusedKernelSpec& spec) {
  const Attribute* eps = spec.node.attribute("epsilon");
  const Attribute* axes = spec.node.attribute("axes");
  const Attribute* centered = spec.node.attribute("centered");
  if (!eps || !axes || axes->i < 1) return make_error("LayerNorm needs epsilon and axes");
  return KernelPtr(new LayerNormKernel(eps->f, static_cast<size_t>(axes->i), !centered || centered->i != 0,
                                       spec.options.has(Fault::LayerNormDropEps)));
}

}  // namespace reduce::opt
