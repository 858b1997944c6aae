// The model an out-of-graph engine must run to return values that are not graph outputs.
#pragma once

#include <string>
#include <vector>

#include "core/model.h"

namespace reduce {

// The requested values: `requested`, or the graph outputs when it is empty.
std::vector<std::string> requested_outputs(const Model& model, const std::vector<std::string>& requested);

// Whether `outputs` are exactly the graph outputs, in order.
bool are_graph_outputs(const Model& model, const std::vector<std::string>& outputs);

// A copy of `model` (weights shared, not copied) whose graph outputs are `outputs`, typed from the
// graph's value infos, else from shape inference. Values the graph neither computes nor takes are an error.
Expected<Model> model_with_outputs(const Model& model, const std::vector<std::string>& outputs);

}  // namespace reduce
