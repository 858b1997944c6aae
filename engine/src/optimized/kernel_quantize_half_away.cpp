// QuantizeLinear with fault quantize-half-away: ties of x / y_scale round half away from zero
// (std::round, Rust's f32::round, an ISA's "nearest") instead of ONNX's half to even, one unit off
// on every tie whose integer part is even.
#include "kernel_quantize_half_away.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace reduce::opt {

namespace {

// Forwards to the executor's context, keeping the output the reference kernel allocates.
class OutputCapture : public KernelContext {
 public:
  explicit OutputCapture(KernelContext& inner) : inner_(inner) {}
  size_t input_count() const override { return inner_.input_count(); }
  const Tensor* input(size_t i) const override { return inner_.input(i); }
  bool input_is_constant(size_t i) const override { return inner_.input_is_constant(i); }
  size_t output_count() const override { return inner_.output_count(); }
  Expected<Tensor*> allocate_output(size_t i, DType dtype, Shape shape) override {
    auto t = inner_.allocate_output(i, dtype, std::move(shape));
    if (t && i == 0) output = *t;
    return t;
  }
  void set_output(size_t i, Tensor tensor) override { inner_.set_output(i, std::move(tensor)); }
  Status reserve(uint64_t bytes) override { return inner_.reserve(bytes); }
  Expected<std::vector<Tensor>> run_subgraph(const Graph& graph, const std::vector<Tensor>& inputs) override {
    return inner_.run_subgraph(graph, inputs);
  }
  Tensor* output = nullptr;

 private:
  KernelContext& inner_;
};

class QuantizeHalfAwayKernel : public Kernel {
 public:
  explicit QuantizeHalfAwayKernel(KernelPtr reference) : reference_(std::move(reference)) {}
  Status compute(KernelContext& ctx) const override {
    OutputCapture capture(ctx);
    REDUCE_TRY(reference_->compute(capture));
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* zero = ctx.input_count() > 2 ? ctx.input(2) : nullptr;
    Tensor* y = capture.output;
    // Per-tensor float to INT8/UINT8 only, the common activation case; every other form stays exact.
    if (!y || !x || !scale || x->dtype() != DType::Float || scale->dtype() != DType::Float || scale->elements() != 1 ||
        (zero && zero->elements() != 1))
      return {};
    if (y->dtype() == DType::Int8) retie<int8_t>(*x, scale->data<float>()[0], zero, *y);
    else if (y->dtype() == DType::UInt8) retie<uint8_t>(*x, scale->data<float>()[0], zero, *y);
    return {};
  }

 private:
  // Rewrites the elements whose quotient is a tie, the only ones where the two roundings differ.
  template <typename T>
  static void retie(const Tensor& x, float scale, const Tensor* zero, Tensor& y) {
    const double zp = zero ? static_cast<double>(zero->data<T>()[0]) : 0.0;
    const auto in = x.data<float>();
    auto out = y.mutable_data<T>();
    for (size_t i = 0; i < in.size() && i < out.size(); ++i) {
      const float q = in[i] / scale;
      if (q - std::floor(q) != 0.5f) continue;
      const double v = std::round(static_cast<double>(q)) + zp;
      out[i] = static_cast<T>(std::clamp(v, double{std::numeric_limits<T>::min()}, double{std::numeric_limits<T>::max()}));
    }
  }
  KernelPtr reference_;
};

}  // namespace

bool quantize_half_away_triggers(const Node& node) {
  return node.op_type == "QuantizeLinear" && (node.domain.empty() || node.domain == "ai.onnx");
}

Expected<KernelPtr> make_quantize_kernel(const Node& node, int64_t opset, const OptimizedOptions& options) {
  REDUCE_ASSIGN(KernelPtr reference, make_reference_kernel(node, opset));
  if (!options.has(Fault::QuantizeHalfAway) || !quantize_half_away_triggers(node)) return reference;
  return KernelPtr(new QuantizeHalfAwayKernel(std::move(reference)));
}

}  // namespace reduce::opt
