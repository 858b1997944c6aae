// Quantized corpus models: a float model made explicitly quantized (QuantizeLinear/DequantizeLinear
// in the graph, as ONNX Runtime's and Model Optimizer's quantizers write it), every quantization
// made exact except the sensitive nodes': their error is the only one, so the set of nodes to leave
// in float is known.
#pragma once

#include <vector>

#include "core/model.h"

namespace reduce::corpus {

enum class QuantizeScheme {
  None,
  // INT8 weights of every MatMul: per output channel, the float weights snapped to the grid (exact);
  // the sensitive MatMuls' weights per tensor, so that an outlier channel sets a scale that rounds
  // the other channels' weights to 0 or one step.
  Int8OutlierChannel,
  // FP8 E4M3 weights of every MatMul, per tensor, the float weights snapped to E4M3 values (exact);
  // the sensitive MatMuls also quantize their input to E4M3 with scale 1, which saturates at 448.
  Fp8Saturation,
};

// The quantized model of `float_model` (names and order of its nodes kept, Q/DQ nodes added before
// their readers); snaps `float_model`'s weights in place where the scheme makes them exact.
// `sensitive`: node indices of `float_model`. The FP8 scheme needs opset 19 or later.
Model quantize_model(Model& float_model, const std::vector<size_t>& sensitive, QuantizeScheme scheme);

}  // namespace reduce::corpus
