// The optimized engine's Resize kernel: the reference Resize, except under fault resize-half-pixel.
#pragma once

#include "fused_kernel.h"

namespace reduce::opt {

// The trigger of resize-half-pixel: Resize, mode linear, coordinate_transformation_mode half_pixel.
bool resize_half_pixel_triggers(const Node& node, int64_t opset);

// The kernel for a Resize node: with the fault and its trigger, a linear half_pixel Resize computes
// its source coordinates as asymmetric (x_src = x_dst / scale, no half-pixel offset).
Expected<KernelPtr> make_resize_kernel(const Node& node, int64_t opset, const OptimizedOptions& options);

}  // namespace reduce::opt
