// Shapes of the static-shape broadcast kernel, shared by its pass (which arms the fault) and its kernel.
#pragma once

#include <optional>

#include "core/tensor.h"

namespace reduce::opt {

// The multidirectional broadcast of two shapes, or nullopt if they do not broadcast.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// The trigger of fault broadcast-batch1: both operands rank 4, output dim0 == 1, and operand
// `which` (0 or 1) has dim1 == 1 while the output's dim1 > 1.
bool broadcast_batch1_triggers(const Shape& a, const Shape& b, int which);

}  // namespace reduce::opt
