// Filled weights written small: a weight that holds one value becomes a ConstantOfShape node.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/model.h"

namespace reduce {

struct FillNodes {
  Model model;
  std::vector<std::string> replaced;  // the weights now made by a ConstantOfShape node, sorted
};

// `model` with each weight named in `filled` (Candidate::filled: every element holds the value) made
// by a ConstantOfShape node (its value the weight's first element, its shape an int64 initializer)
// instead of stored whole: the same values in a few bytes. Left as they are: weights under
// `min_bytes`, weights that are also graph inputs, element types ConstantOfShape does not take at the
// model's opset (bfloat16 before 20), and every weight of a model importing the default domain below
// opset 9. Weights are shared with `model`, never copied.
FillNodes fills_as_nodes(const Model& model, const std::map<std::string, double, std::less<>>& filled,
                         size_t min_bytes = 1024);

}  // namespace reduce
