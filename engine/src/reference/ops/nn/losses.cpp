// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (deterministic losses, used at inference too).
#include <cmath>
#include <limits>
#include <optional>

#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

enum class Reduction { None, Sum, Mean };

Expected<Reduction> parse_reduction(const Node& node) {
  const std::string r = attr_string(node, "reduction", "mean");
  if (r == "none") return Reduction::None;
  if (r == "sum") return Reduction::Sum;
  if (r == "mean") return Reduction::Mean;
  return make_error("reduction must be none, sum or mean, got '" + r + "'");
}

// Reads element i of a float or double tensor as double.
double at(const Tensor& t, uint64_t i) { return t.dtype() == DType::Double ? t.data<double>()[i] : t.data<float>()[i]; }

int64_t label_at(const Tensor& t, uint64_t i) {
  return t.dtype() == DType::Int32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
}

// The NLL of log-probabilities `logp` [N, C, d...] against `target` [N, d...]: per-element losses
// (reduction none) or their weighted sum / weighted mean, accumulated in double.
Expected<Tensor> nll(const Tensor& logp, const Tensor& target, const Tensor* weight, Reduction reduction,
                     std::optional<int64_t> ignore_index) {
  if (logp.rank() < 2) return make_error("input must have rank >= 2 (N, C, ...)");
  if (target.dtype() != DType::Int64 && target.dtype() != DType::Int32) return make_error("target must be int32 or int64");
  const int64_t n = logp.shape()[0], c = logp.shape()[1];
  Shape target_shape{n};
  for (size_t d = 2; d < logp.rank(); ++d) target_shape.push_back(logp.shape()[d]);
  if (target.shape() != target_shape)
    return make_error("target shape " + shape_to_string(target.shape()) + " does not match input " +
                      shape_to_string(logp.shape()));
  if (weight && (weight->rank() != 1 || weight->shape()[0] != c))
    return make_error("weight must have shape [" + std::to_string(c) + "]");
  const uint64_t inner = target.elements() / static_cast<uint64_t>(std::max<int64_t>(n, 1));
  REDUCE_ASSIGN(Tensor losses, Tensor::allocate(DType::Double, target_shape));
  auto out = losses.mutable_data<double>();
  double sum = 0, weight_sum = 0;
  for (int64_t b = 0; b < n; ++b)
    for (uint64_t k = 0; k < inner; ++k) {
      const uint64_t t = static_cast<uint64_t>(b) * inner + k;
      const int64_t label = label_at(target, t);
      if (ignore_index && label == *ignore_index) continue;
      if (label < 0 || label >= c)
        return make_error("target value " + std::to_string(label) + " is outside [0, " + std::to_string(c) + ")");
      const double w = weight ? at(*weight, static_cast<uint64_t>(label)) : 1.0;
      out[t] = -at(logp, (static_cast<uint64_t>(b) * c + label) * inner + k) * w;
      sum += out[t];
      weight_sum += w;
    }
  if (reduction == Reduction::None) return losses;
  REDUCE_ASSIGN(Tensor scalar, Tensor::allocate(DType::Double, {}));
  scalar.mutable_data<double>()[0] = reduction == Reduction::Sum ? sum : sum / weight_sum;
  return scalar;
}

Expected<Tensor> to_dtype(const Tensor& d, DType dtype) {
  if (dtype == DType::Double) return d;
  REDUCE_ASSIGN(Tensor f, Tensor::allocate(DType::Float, d.shape()));
  auto src = d.data<double>();
  auto dst = f.mutable_data<float>();
  for (size_t i = 0; i < src.size(); ++i) dst[i] = static_cast<float>(src[i]);
  return narrow(f, dtype);
}

Status check_float(const Tensor& t, const char* what) {
  if (t.dtype() == DType::Float || t.dtype() == DType::Double) return {};
  return make_error(std::string(what) + " must be float or double (float16 is widened), got " +
                    std::string(dtype_name(t.dtype())));
}

// log_softmax over axis 1 of [N, C, d...], in double.
Expected<Tensor> log_softmax_axis1(const Tensor& scores) {
  if (scores.rank() < 2) return make_error("scores must have rank >= 2 (N, C, ...)");
  const int64_t n = scores.shape()[0], c = scores.shape()[1];
  const uint64_t inner = scores.elements() / static_cast<uint64_t>(std::max<int64_t>(n * c, 1));
  REDUCE_ASSIGN(Tensor logp, Tensor::allocate(DType::Double, scores.shape()));
  auto lp = logp.mutable_data<double>();
  for (int64_t b = 0; b < n; ++b)
    for (uint64_t k = 0; k < inner; ++k) {
      auto idx = [&](int64_t j) { return (static_cast<uint64_t>(b) * c + j) * inner + k; };
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < c; ++j) mx = std::max(mx, at(scores, idx(j)));
      double s = 0;
      for (int64_t j = 0; j < c; ++j) s += std::exp(at(scores, idx(j)) - mx);
      const double log_s = std::log(s);
      for (int64_t j = 0; j < c; ++j) lp[idx(j)] = at(scores, idx(j)) - mx - log_s;
    }
  return logp;
}

// NegativeLogLikelihoodLoss on log-probabilities, or SoftmaxCrossEntropyLoss on scores (which also
// outputs the log-probabilities when asked).
class LossKernel : public Kernel {
 public:
  LossKernel(bool from_scores, Reduction r, std::optional<int64_t> ii)
      : from_scores_(from_scores), reduction_(r), ignore_index_(ii) {}
  Status compute(KernelContext& ctx) const override {
    const DType dtype = ctx.input(0)->dtype();
    REDUCE_ASSIGN(Tensor input, widen(*ctx.input(0)));
    REDUCE_TRY(check_float(input, from_scores_ ? "scores" : "input"));
    Tensor logp = input;
    if (from_scores_) {
      REDUCE_ASSIGN(logp, log_softmax_axis1(input));
    }
    std::optional<Tensor> weight;
    if (ctx.input(2)) {
      REDUCE_ASSIGN(weight, widen(*ctx.input(2)));
    }
    REDUCE_ASSIGN(Tensor loss, nll(logp, *ctx.input(1), weight ? &*weight : nullptr, reduction_, ignore_index_));
    REDUCE_ASSIGN(Tensor out, to_dtype(loss, dtype));
    ctx.set_output(0, std::move(out));
    if (from_scores_ && ctx.output_count() > 1) {
      REDUCE_ASSIGN(Tensor log_prob, to_dtype(logp, dtype));
      ctx.set_output(1, std::move(log_prob));
    }
    return {};
  }

 private:
  bool from_scores_;
  Reduction reduction_;
  std::optional<int64_t> ignore_index_;
};

std::optional<int64_t> ignore_index(const Node& node) {
  const Attribute* a = node.attribute("ignore_index");
  if (!a || a->kind != Attribute::Kind::Int) return std::nullopt;
  return a->i;
}

}  // namespace

Expected<KernelPtr> make_negative_log_likelihood_loss(const Node& node, int64_t) {
  REDUCE_ASSIGN(Reduction r, parse_reduction(node));
  return KernelPtr(new LossKernel(false, r, ignore_index(node)));
}

Expected<KernelPtr> make_softmax_cross_entropy_loss(const Node& node, int64_t) {
  REDUCE_ASSIGN(Reduction r, parse_reduction(node));
  return KernelPtr(new LossKernel(true, r, ignore_index(node)));
}

}  // namespace reduce::ref
