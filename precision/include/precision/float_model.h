// The expected values of a quantized (Q/DQ) model from its float model: `reduce precision` searches
// the quantized nodes to leave in float against them, `reduce compare` shows the error each
// quantized node adds against them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adapters/engine_spec.h"
#include "core/model.h"
#include "core/tensor_set.h"
#include "precision/quantization.h"
#include "oracle/samples.h"

namespace reduce {

struct FloatModelRequest {
  std::optional<std::string> float_model;  // the float model's file (`--float-model`)
  std::string model_path;                  // the quantized model's file, for errors
  EngineSpec engine;                       // the engine under test's spec, parsed
  EngineSpec reference;                    // the reference's spec, parsed (`ref`): it computes the float outputs
  bool expected_given = false;             // the float outputs are given (`--expected`)
  // Without a float model, a Q/DQ model on an engine without per-node precision is compared with
  // itself with every Q/DQ pair folded (`reduce precision`); otherwise nothing applies.
  bool fold_without_float_model = false;
};

// The float model's outputs on each sample, when the model is a Q/DQ model compared with its float
// model (the request names one, or `fold_without_float_model` applies); none otherwise, or when
// they are given. Fills `plan` when it applies. Errors: a float model that cannot be loaded or does
// not match, expected values given too, a model with nothing quantized.
Expected<std::vector<TensorSample>> float_model_expectations(const FloatModelRequest& request, const Model& model,
                                                             const std::vector<InputSample>& samples,
                                                             std::optional<QuantizedSearchPlan>& plan);

}  // namespace reduce
