// model_with_outputs: exposes intermediate values as graph outputs for engines that only return those.
#include "external/output_model.h"

#include <unordered_set>

#include "core/extract.h"

namespace reduce {

std::vector<std::string> requested_outputs(const Model& model, const std::vector<std::string>& requested) {
  if (!requested.empty()) return requested;
  std::vector<std::string> out;
  for (const auto& vi : model.graph.outputs) out.push_back(vi.name);
  return out;
}

bool are_graph_outputs(const Model& model, const std::vector<std::string>& outputs) {
  if (outputs.size() != model.graph.outputs.size()) return false;
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i] != model.graph.outputs[i].name) return false;
  return true;
}

Expected<Model> model_with_outputs(const Model& model, const std::vector<std::string>& outputs) {
  std::unordered_set<std::string> known;
  for (const auto& vi : model.graph.inputs) known.insert(vi.name);
  for (const auto& init : model.graph.initializers) known.insert(init.name);
  for (const auto& node : model.graph.nodes) known.insert(node.outputs.begin(), node.outputs.end());
  Model copy = model;
  copy.graph.outputs.clear();
  // Importers need typed outputs (OpenCV asserts it); shape inference types the values the graph
  // does not declare. When it fails, values stay as declared (or untyped) and the engine decides.
  std::unordered_map<std::string, ValueType> inferred;
  for (const auto& name : outputs) {
    if (name.empty() || !known.count(name)) return make_error("the model has no value named '" + name + "'");
    const ValueInfo* info = model.graph.find_value_info(name);
    if (info && info->type.is_tensor()) {
      copy.graph.outputs.push_back(*info);
      continue;
    }
    if (inferred.empty())
      if (auto types = infer_value_types(model); types.ok()) inferred = std::move(types).value();
    const auto it = inferred.find(name);
    copy.graph.outputs.push_back(ValueInfo{name, it != inferred.end() ? it->second : ValueType{}, {}});
  }
  return copy;
}

}  // namespace reduce
