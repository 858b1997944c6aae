// `reduce precision` on an explicitly quantized (Q/DQ) model: a 1-minimal set of quantized nodes to
// leave in float (their QuantizeLinear/DequantizeLinear inputs removed) so that the outputs are
// within tolerance of the float model's on every sample; the counterpart of the FP32 keep set for
// INT8/FP8/INT4 models, as ONNX Runtime's and Model Optimizer's `nodes_to_exclude` take it.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/quantized_nodes.h"
#include "engine/engine.h"
#include "precision/precision.h"

namespace reduce {

struct QuantizedSearchPlan {
  std::vector<QuantizedNode> nodes;  // the candidates, in node order
  // DequantizeLinear output of a quantized weight -> its float value.
  std::map<std::string, Tensor, std::less<>> float_weights;
  size_t weights_from_float_model = 0;  // taken from the float model (node name, op type, input position)
  // Quantized nodes whose weights were found in the float model (each weight within one
  // quantization step of its dequantized value): at the node of the same name and op type, at the
  // node in the same place among the nodes of that op type (another exporter's names), or
  // elsewhere by value alone.
  size_t nodes_matched_by_name = 0;
  size_t nodes_matched_by_place = 0;
  size_t nodes_matched_by_value = 0;
  size_t weights_folded = 0;            // dequantized here: they keep the quantizer's rounding
  // The model whose outputs are the target: the float model given, or the Q/DQ model with every
  // quantized node left in float (weights folded).
  Model float_model;
  std::string float_model_source;  // its file; "" when derived
};

// Finds the quantized nodes and every quantized weight's float value: the DequantizeLinear of the
// weight computed by `reference`, replaced, when `float_model` is given, by the float constant it
// was made from (within one quantization step of it; looked for first at the node of the same
// name, then at the same place among the nodes of that op type, then among all constants of its
// shape). Errors: the model has no quantized node; a float model whose graph inputs or outputs (by
// name) differ from the model's, or that gives no weight.
Expected<QuantizedSearchPlan> plan_quantized_search(const Model& quantized, std::optional<Model> float_model,
                                                    const std::string& float_source, Engine& reference);

// The float model's outputs on `inputs`, in the order of `quantized`'s outputs.
Expected<std::vector<NamedTensor>> float_model_outputs(const QuantizedSearchPlan& plan, const Model& quantized,
                                                       Engine& reference, const std::vector<NamedTensor>& inputs);

// The error each quantized node adds: its output computed with its quantized inputs from the float
// values it would read in the float model, against the float node's output; and, with
// `accumulated`, what its output carries in the quantized model (everything before it quantized)
// against the float model's. One per output of a quantized node, on the reference.
struct QuantizationError {
  size_t node = 0;
  std::string value;
  OutputComparison added;
  std::optional<OutputComparison> accumulated;
};
Expected<std::vector<QuantizationError>> quantization_errors(const Model& quantized, const QuantizedSearchPlan& plan,
                                                             Engine& reference, const std::vector<NamedTensor>& inputs,
                                                             const Tolerance& tolerance, bool accumulated,
                                                             const std::atomic<bool>* cancel = nullptr);

// The errors as `reduce compare` shows where error is born (oracle/error_origin.h): `local` is the
// error a node adds quantized alone, `accumulated` what its output carries in the quantized model;
// top_local the nodes that add error beyond the tolerance, largest first.
ErrorOrigin quantization_origin(const std::vector<QuantizationError>& errors);

// `samples`: oracles of the quantized model whose expected outputs are the float model's (one per
// input sample). Checks that the model fails as it is and passes with every quantized node left in
// float, then finds a 1-minimal set to leave in float (nodes ranked by the error they add first).
// PrecisionOutcome::pinned are the nodes left in float; `quantization` says how.
Expected<PrecisionOutcome> find_float_nodes(std::vector<Oracle*> samples, const QuantizedSearchPlan& plan,
                                            const PrecisionOptions& options, std::stop_token stop);

// The bundle: precision.txt (the nodes), model.onnx (the quantized model), the partially quantized
// model, report.md and report.json; each written whole, then renamed into place.
inline constexpr const char* kPartiallyQuantizedFile = "model_partially_quantized.onnx";
Status write_quantization_bundle(const std::filesystem::path& dir, const Oracle& oracle, const QuantizedSearchPlan& plan,
                                 const PrecisionOutcome& outcome, const std::string& command);

// Ready to paste: ONNX Runtime's `quantize_static(..., nodes_to_exclude=[...])` and Model
// Optimizer's ONNX quantization command with the set excluded.
std::string onnxruntime_quantize_call(const std::vector<PinnedNode>& excluded);
std::string modelopt_quantize_command(const std::vector<PinnedNode>& excluded);

}  // namespace reduce
