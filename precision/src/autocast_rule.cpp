// AutoCast's keep rule on reference values (precision/autocast_rule.h).
#include "precision/autocast_rule.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "engine/engine.h"

namespace reduce {

double max_magnitude(const Tensor* t) {
  if (!t || t->dtype() != DType::Float) return 0;
  double m = 0;
  for (float v : t->data<float>()) m = std::max(m, static_cast<double>(std::fabs(v)));  // NaN compares false
  return m;
}

bool autocast_keeps(const Graph& graph, size_t n, const std::function<double(const std::string&)>& value_max,
                    const AutocastRule& rule) {
  const Node& node = graph.nodes[n];
  for (const auto& v : node.outputs)
    if (!v.empty() && value_max(v) > rule.data_max) return true;
  for (const auto& v : node.inputs)
    if (const Initializer* init = v.empty() ? nullptr : graph.find_initializer(v))
      if (max_magnitude(&init->tensor) > rule.init_max) return true;
  return false;
}

Expected<std::vector<size_t>> autocast_rule_nodes(const Model& model, const std::vector<std::vector<NamedTensor>>& samples,
                                                  const AutocastRule& rule, int threads) {
  const Graph& g = model.graph;
  RunOptions options;
  for (const auto& node : g.nodes)
    for (const auto& v : node.outputs)
      if (!v.empty()) options.outputs.push_back(v);
  auto engine = make_reference_engine(threads);
  REDUCE_ASSIGN(auto prepared, engine->prepare(model));
  std::unordered_map<std::string, double> largest;
  for (const auto& sample : samples) {
    TensorMap inputs;
    for (const auto& t : sample) inputs.emplace(t.name, t.tensor);
    REDUCE_TRY(run_streaming(*prepared, inputs, options, [&](const std::string& name, Tensor value) -> Status {
      double& m = largest[name];
      m = std::max(m, max_magnitude(&value));
      return {};
    }));
  }
  const auto value_max = [&](const std::string& v) {
    const auto it = largest.find(v);
    return it == largest.end() ? 0.0 : it->second;
  };
  std::vector<size_t> kept;
  for (size_t n = 0; n < g.nodes.size(); ++n)
    if (autocast_keeps(g, n, value_max, rule)) kept.push_back(n);
  return kept;
}

}  // namespace reduce
