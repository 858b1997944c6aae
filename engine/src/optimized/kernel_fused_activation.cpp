// FusedActivation (pass activation-fusion): runs the producer's reference kernel, then applies the
// activation in place on its float output buffer (other types: the activation's reference kernel).
#include <algorithm>
#include <cmath>
#include <limits>

#include "fused_kernel.h"

namespace reduce::opt {

namespace {

enum class Activation { Relu, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish, Clip };

// HardSigmoid's attribute defaults (ONNX): alpha 0.2, beta 0.5.
constexpr float kHardSigmoidAlpha = 0.2f, kHardSigmoidBeta = 0.5f;

float attribute_or(const Node& n, std::string_view name, float fallback) {
  const Attribute* a = n.attribute(name);
  return a && a->kind == Attribute::Kind::Float ? a->f : fallback;
}

class FusedActivationKernel : public Kernel {
 public:
  FusedActivationKernel(KernelPtr producer, size_t producer_inputs, KernelPtr activation, Activation kind, float alpha,
                        float beta)
      : producer_(std::move(producer)), producer_inputs_(producer_inputs), activation_(std::move(activation)),
        kind_(kind), alpha_(alpha), beta_(beta) {}

  Status compute(KernelContext& ctx) const override {
    std::vector<const Tensor*> in;
    std::vector<bool> constant;
    for (size_t k = 0; k < producer_inputs_; ++k) {
      in.push_back(ctx.input(k));
      constant.push_back(ctx.input_is_constant(k));
    }
    REDUCE_ASSIGN(Tensor y, run_part(*producer_, std::move(in), std::move(constant)));
    if (y.dtype() != DType::Float) {
      std::vector<const Tensor*> act_in = {&y};
      std::vector<bool> act_constant = {false};
      for (size_t k = producer_inputs_; k < ctx.input_count(); ++k) {
        act_in.push_back(ctx.input(k));
        act_constant.push_back(ctx.input_is_constant(k));
      }
      REDUCE_ASSIGN(Tensor out, run_part(*activation_, std::move(act_in), std::move(act_constant)));
      ctx.set_output(0, std::move(out));
      return {};
    }
    REDUCE_ASSIGN(y, writable(std::move(y)));
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    if (kind_ == Activation::Clip) {
      lo = alpha_;
      hi = beta_;
      const Tensor* min = ctx.input(producer_inputs_);
      const Tensor* max = ctx.input(producer_inputs_ + 1);
      if (min && min->elements() == 1 && min->dtype() == DType::Float) lo = min->data<float>()[0];
      if (max && max->elements() == 1 && max->dtype() == DType::Float) hi = max->data<float>()[0];
    }
    apply(y.mutable_data<float>(), lo, hi);
    ctx.set_output(0, std::move(y));
    return {};
  }

 private:
  void apply(std::span<float> v, float lo, float hi) const {
    switch (kind_) {
      case Activation::Relu: for (float& x : v) x = x < 0 ? 0.0f : x; break;
      case Activation::LeakyRelu: for (float& x : v) x = x < 0 ? alpha_ * x : x; break;
      case Activation::Sigmoid:
        for (float& x : v) x = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x))));
        break;
      case Activation::Tanh: for (float& x : v) x = std::tanh(x); break;
      case Activation::HardSigmoid: for (float& x : v) x = std::max(0.0f, std::min(1.0f, alpha_ * x + beta_)); break;
      case Activation::HardSwish:
        for (float& x : v) x = x * std::max(0.0f, std::min(1.0f, x / 6.0f + 0.5f));
        break;
      case Activation::Clip: for (float& x : v) x = std::isnan(x) ? x : std::min(hi, std::max(lo, x)); break;
    }
  }

  KernelPtr producer_;
  size_t producer_inputs_;
  KernelPtr activation_;
  Activation kind_;
  float alpha_, beta_;
};

}  // namespace

Expected<KernelPtr> make_fused_activation(const FusedKernelSpec& spec) {
  if (spec.parts.size() != 2) return make_error("FusedActivation needs its producer and activation");
  const Node& producer = spec.parts[0];
  const Node& act = spec.parts[1];
  REDUCE_ASSIGN(KernelPtr producer_kernel, make_part_kernel(producer, spec));
  REDUCE_ASSIGN(KernelPtr activation_kernel, make_reference_kernel(act, spec.opset));
  Activation kind;
  float alpha = 0, beta = 0;
  if (act.op_type == "Relu") kind = Activation::Relu;
  else if (act.op_type == "LeakyRelu") kind = Activation::LeakyRelu, alpha = attribute_or(act, "alpha", 0.01f);
  else if (act.op_type == "Sigmoid") kind = Activation::Sigmoid;
  else if (act.op_type == "Tanh") kind = Activation::Tanh;
  else if (act.op_type == "HardSigmoid") {
    kind = Activation::HardSigmoid;
    // The fault (docs/faults.md) reads no attribute: PyTorch's 1/6 becomes ONNX's default 0.2.
    const bool defaults = spec.options.has(Fault::HardSigmoidDefaultAlpha);
    alpha = defaults ? kHardSigmoidAlpha : attribute_or(act, "alpha", kHardSigmoidAlpha);
    beta = defaults ? kHardSigmoidBeta : attribute_or(act, "beta", kHardSigmoidBeta);
  }
  else if (act.op_type == "HardSwish") kind = Activation::HardSwish;
  else if (act.op_type == "Clip") {
    kind = Activation::Clip;
    // Before opset 11 the bounds are attributes; since then, optional inputs.
    alpha = attribute_or(act, "min", -std::numeric_limits<float>::infinity());
    beta = attribute_or(act, "max", std::numeric_limits<float>::infinity());
  } else {
    return make_error("FusedActivation: unsupported activation " + act.op_type);
  }
  return KernelPtr(new FusedActivationKernel(std::move(producer_kernel), producer.inputs.size(),
                                             std::move(activation_kernel), kind, alpha, beta));
}

}  // namespace reduce::opt
