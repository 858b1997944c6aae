// The fused-kernel registry (fused_kernels.def) and the helpers fused kernels share.
#include "fused_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "plan_graph.h"

namespace reduce::opt {

#define REDUCE_FUSED_KERNEL(op, factory) Expected<KernelPtr> factory(const FusedKernelSpec&);
#include "fused_kernels.def"
#undef REDUCE_FUSED_KERNEL

FusedKernelFactory find_fused_kernel(const std::string& op_type) {
  static const std::pair<const char*, FusedKernelFactory> kKernels[] = {
#define REDUCE_FUSED_KERNEL(op, factory) {op, &factory},
#include "fused_kernels.def"
#undef REDUCE_FUSED_KERNEL
  };
  for (const auto& [op, factory] : kKernels)
    if (op_type == op) return factory;
  return nullptr;
}

Expected<KernelPtr> make_reference_kernel(const Node& node, int64_t opset) {
  ref::KernelFactory factory = ref::find_kernel(node.op_type, node.domain, opset);
  if (!factory) return make_error("unsupported operator " + node.op_type + " (opset " + std::to_string(opset) + ")");
  return factory(node, opset);
}

Expected<KernelPtr> make_part_kernel(const Node& part, const FusedKernelSpec& spec) {
  if (part.domain != kFusedDomain) return make_reference_kernel(part, spec.opset);
  FusedKernelFactory factory = find_fused_kernel(part.op_type);
  if (!factory) return make_error(std::string("unsupported operator ") + kFusedDomain + "." + part.op_type);
  return factory(FusedKernelSpec{part, {}, spec.opset, spec.options});
}

Expected<Tensor> run_part(const Kernel& kernel, std::vector<const Tensor*> inputs, std::vector<bool> constant) {
  ChainContext ctx(std::move(inputs), std::move(constant), 1);
  REDUCE_TRY(kernel.compute(ctx));
  return ctx.take_output(0);
}

Expected<Tensor> reshaped(const Tensor& t, Shape shape) {
  return Tensor::view(t.dtype(), std::move(shape), t.owner(), t.bytes().data(), t.byte_size(), t.writable());
}

Expected<Tensor> writable(Tensor t) {
  if (t.writable()) return t;
  return Tensor::copy_of(t.dtype(), t.shape(), t.bytes());
}

void softmax_scores(float* x, size_t n, bool unstable) {
  float max = -std::numeric_limits<float>::infinity();
  if (!unstable)
    for (size_t j = 0; j < n; ++j) max = std::max(max, x[j]);
  const float shift = unstable ? 0.0f : max;
  double sum = 0;
  for (size_t j = 0; j < n; ++j) {
    x[j] = std::exp(x[j] - shift);
    sum += x[j];
  }
  for (size_t j = 0; j < n; ++j) x[j] = static_cast<float>(x[j] / sum);
}

}  // namespace reduce::opt
