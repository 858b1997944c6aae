// The large-activation model of issue 20: an elementwise chain over [1, C, H, W] floats (every
// value the size of the input, tiny weights) with one broadcast-batch1 trigger in the middle.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/model.h"

namespace reduce::corpus {

// `nodes` (at least 4) nodes in all: the chain of Add, Mul, Tanh, Relu, and the trigger (a 1x1
// Conv gate, Sigmoid, Mul([1,C,H,W], [1,1,H,W])), whose Mul is the minimal reproducer under
// `opt:fault=broadcast-batch1`. Deterministic.
Model large_activation_chain(size_t nodes, int64_t channels, int64_t side);

// Large weights, small activations: `weights` MatMuls with float[side, side] weights (64 MiB each
// at side 4096), each followed by Tanh, over [1, 4, 16, side] values (1 MiB at side 4096), with the
// same broadcast-batch1 trigger after the first half. Weights are seeded uniform in +-1/sqrt(side).
Model large_weights_chain(size_t weights, int64_t side);

}  // namespace reduce::corpus
