// Fused kernels of the optimized engine: how they are built, and the context they run reference kernels in.
#pragma once

#include <vector>

#include "engine/optimized.h"
#include "reference/kernel.h"

namespace reduce::opt {

using ref::Kernel;
using ref::KernelContext;
using ref::KernelPtr;

// What a fused kernel's factory gets: the fused node, the original nodes it replaced, the opset of
// the default domain, and the engine options (faults live in the kernels that read them).
struct FusedKernelSpec {
  const Node& node;
  const std::vector<Node>& parts;
  int64_t opset;
  const OptimizedOptions& options;
};
using FusedKernelFactory = Expected<KernelPtr> (*)(const FusedKernelSpec& spec);

// The factory for a fused op type (fused_kernels.def), or nullptr.
FusedKernelFactory find_fused_kernel(const std::string& op_type);

// The reference kernel of a node (errors name the op when there is none).
Expected<KernelPtr> make_reference_kernel(const Node& node, int64_t opset);

// The kernel of one part of a fused node: its reference kernel, or the fused kernel a rewrite
// after the last pass put in its place (a MatMulRoundedWeight producer).
Expected<KernelPtr> make_part_kernel(const Node& part, const FusedKernelSpec& spec);

// Runs a reference kernel on tensors held by a fused kernel (no executor frame, no subgraphs).
class ChainContext : public KernelContext {
 public:
  ChainContext(std::vector<const Tensor*> inputs, std::vector<bool> constant, size_t outputs)
      : inputs_(std::move(inputs)), constant_(std::move(constant)), outputs_(outputs), set_(outputs, false) {}

  size_t input_count() const override { return inputs_.size(); }
  const Tensor* input(size_t i) const override { return i < inputs_.size() ? inputs_[i] : nullptr; }
  bool input_is_constant(size_t i) const override { return i < constant_.size() && constant_[i]; }
  size_t output_count() const override { return outputs_.size(); }
  Expected<Tensor*> allocate_output(size_t i, DType dtype, Shape shape) override {
    REDUCE_ASSIGN(outputs_.at(i), Tensor::allocate(dtype, std::move(shape)));
    set_[i] = true;
    return &outputs_[i];
  }
  void set_output(size_t i, Tensor tensor) override {
    outputs_.at(i) = std::move(tensor);
    set_[i] = true;
  }
  // Parts of a fused kernel are small elementwise or reduction kernels (never loops): the fused
  // node's outputs are what the run's budget counts.
  Status reserve(uint64_t) override { return {}; }
  Expected<std::vector<Tensor>> run_subgraph(const Graph&, const std::vector<Tensor>&) override {
    return make_error("subgraphs cannot run inside a fused kernel");
  }
  // Output i after compute(), or an error if the kernel did not produce it.
  Expected<Tensor> take_output(size_t i) {
    if (i >= outputs_.size() || !set_[i]) return make_error("fused kernel part produced no output " + std::to_string(i));
    return std::move(outputs_[i]);
  }

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<bool> constant_;
  std::vector<Tensor> outputs_;
  std::vector<bool> set_;
};

// Runs `kernel` on `inputs` (constness given per input) and returns its first output.
Expected<Tensor> run_part(const Kernel& kernel, std::vector<const Tensor*> inputs, std::vector<bool> constant);

// A tensor viewing the same storage with another shape (same element count).
Expected<Tensor> reshaped(const Tensor& t, Shape shape);
// A writable owned copy of `t` unless it already is writable.
Expected<Tensor> writable(Tensor t);

// Softmax of one row of attention scores in place, summed in double. `unstable` (the
// attention-unstable-softmax fault) skips the max subtraction, so large logits overflow exp.
void softmax_scores(float* x, size_t n, bool unstable);

}  // namespace reduce::opt
