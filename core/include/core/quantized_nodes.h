// Explicitly quantized (Q/DQ) models: the nodes that read dequantized values, and the model with some
// of them left in float (their QuantizeLinear/DequantizeLinear inputs taken away), as ONNX Runtime's
// and Model Optimizer's `nodes_to_exclude` would have quantized it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model.h"

namespace reduce {

// One input of a node that is read through a DequantizeLinear.
struct DequantizedInput {
  size_t input = 0;       // position among the node's inputs
  size_t dequantize = 0;  // the DequantizeLinear node that writes it
  // The QuantizeLinear that writes the DequantizeLinear's input (an activation quantized on the
  // fly); none when that input is a constant (a quantized weight or bias).
  std::optional<size_t> quantize;
  // What the node reads when left in float: the QuantizeLinear's input for an activation; for a
  // weight, the DequantizeLinear's output name (its float value is given to leave_in_float).
  std::string float_value;
  bool weight() const { return !quantize; }
};

// A node (not a QuantizeLinear or DequantizeLinear) with at least one input read through a
// DequantizeLinear that either dequantizes a constant or follows a QuantizeLinear.
struct QuantizedNode {
  size_t node = 0;
  std::vector<DequantizedInput> inputs;
};

// The quantized nodes of the main graph, in node order. A DequantizeLinear of a graph input or of
// another node's quantized output (not a QuantizeLinear) is not counted: leaving its reader in
// float has no float value to read.
std::vector<QuantizedNode> quantized_nodes(const Graph& graph);

// True when `graph` has QuantizeLinear or DequantizeLinear nodes in the default domain.
bool has_qdq_nodes(const Graph& graph);

// `model` with the nodes `float_nodes` (indices, each a QuantizedNode::node of `quantized`) reading
// float values: activations from their QuantizeLinear's input, weights from `float_weights`
// (DequantizeLinear output name -> float tensor of its shape; added as initializers named
// "<name>_float", made unique). QuantizeLinear and DequantizeLinear nodes no node reads any more
// (and not graph outputs) are removed, with initializers only they read. Errors: a node index not
// among `quantized`, a weight with no float value.
Expected<Model> leave_in_float(const Model& model, const std::vector<QuantizedNode>& quantized,
                               const std::vector<size_t>& float_nodes,
                               const std::map<std::string, Tensor, std::less<>>& float_weights);

}  // namespace reduce
