// Model Optimizer AutoCast's rule for the nodes that stay FP32 when a model is converted to FP16 or
// BF16: a node whose float output exceeds `data_max` in magnitude, or that reads a float weight
// exceeding `init_max`. No search: a threshold on the model's own FP32 values.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/status.h"
#include "core/tensor_file.h"

namespace reduce {

struct AutocastRule {
  double data_max = 512;    // AutoCast's --data_max default
  double init_max = 65504;  // AutoCast's --init_max default (FP16's largest finite value)
};

// The largest magnitude in a float tensor (0 for other types and for null); NaN is ignored.
double max_magnitude(const Tensor* t);

// Whether the rule keeps node `n` of `graph`: `value_max(name)` is the largest magnitude the value
// took (over every sample), the weights are read from the graph's initializers.
bool autocast_keeps(const Graph& graph, size_t n, const std::function<double(const std::string&)>& value_max,
                    const AutocastRule& rule);

// The nodes the rule keeps, in node order, from the reference interpreter's values of `model` on
// every sample (run one after the other, each value looked at once as it is computed and dropped).
// Errors: a node the reference cannot run, named.
Expected<std::vector<size_t>> autocast_rule_nodes(const Model& model, const std::vector<std::vector<NamedTensor>>& samples,
                                                  const AutocastRule& rule, int threads = 0);

}  // namespace reduce
