// Validation every model passes before anything runs on it (ONNX shape inference, engines):
// node arity against the operator schemas, attributes that are divided by or allocated with,
// and the nesting depth of subgraphs.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/model.h"

namespace reduce {

// Subgraphs (If/Loop/Scan bodies) may nest at most this deep; deeper models are refused on load.
inline constexpr int kMaxSubgraphDepth = 64;

// Checks every node of the model, subgraphs included. The first problem found is the error,
// naming the node: "node 'relu_0' (Relu): input 0 is required".
Status validate_model(const Model& model);

// Which inputs of `node` its operator requires, by position (per the ONNX schema of the given
// opset of the node's domain); empty when the operator has no known schema.
std::vector<bool> required_inputs(const Node& node, int64_t opset);

// Whether an operator schema of this ONNX library (any domain, any opset) has this name: "Clip",
// "HardSigmoid", "LinearRegressor". Engines name operators in their messages, and a message that
// names another operator is another failure (normalize_message never masks one).
bool is_onnx_op_type(std::string_view name);

}  // namespace reduce
