// The optimized engine's QuantizeLinear kernel: the reference one, except under fault quantize-half-away.
#pragma once

#include "fused_kernel.h"

namespace reduce::opt {

// The trigger of quantize-half-away: a QuantizeLinear of the default domain.
bool quantize_half_away_triggers(const Node& node);

// The kernel for a QuantizeLinear node: with the fault, a float input quantized per tensor to
// INT8/UINT8 rounds the ties of x / y_scale half away from zero instead of half to even.
Expected<KernelPtr> make_quantize_kernel(const Node& node, int64_t opset, const OptimizedOptions& options);

}  // namespace reduce::opt
