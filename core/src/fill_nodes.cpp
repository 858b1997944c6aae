// Filled weights as ConstantOfShape nodes (core/fill_nodes.h).
#include "core/fill_nodes.h"

#include <algorithm>
#include <unordered_set>

namespace reduce {

namespace {

// Every value name of a graph and its bodies: a new name must not shadow one of them.
void collect_names(const Graph& graph, std::unordered_set<std::string>& names) {
  for (const auto& vi : graph.inputs) names.insert(vi.name);
  for (const auto& vi : graph.outputs) names.insert(vi.name);
  for (const auto& init : graph.initializers) names.insert(init.name);
  for (const Node& n : graph.nodes) {
    names.insert(n.outputs.begin(), n.outputs.end());
    for (const Attribute& a : n.attributes) {
      if (a.g) collect_names(*a.g, names);
      for (const auto& g : a.graphs)
        if (g) collect_names(*g, names);
    }
  }
}

std::string fresh_name(const std::string& base, std::unordered_set<std::string>& taken) {
  std::string name = base;
  for (int k = 1; taken.count(name); ++k) name = base + "_" + std::to_string(k);
  taken.insert(name);
  return name;
}

// ConstantOfShape's `value` types: the numeric types and bool up to opset 19; bfloat16 from 20 (the
// narrow float types too, but a filled weight is never one of them).
bool takes(DType dtype, int64_t opset) {
  switch (dtype) {
    case DType::Float: case DType::Float16: case DType::Double: return true;
    case DType::BFloat16: return opset >= 20;
    default: return false;
  }
}

bool is_graph_input(const Graph& graph, const std::string& name) {
  return std::any_of(graph.inputs.begin(), graph.inputs.end(), [&](const ValueInfo& vi) { return vi.name == name; });
}

// The node making `init`, its shape an initializer named `shape_name`.
Expected<std::pair<Node, Initializer>> fill_node(const Initializer& init, const std::string& shape_name) {
  const Tensor& t = init.tensor;
  REDUCE_ASSIGN(Tensor value, Tensor::copy_of(t.dtype(), {1}, t.bytes().first(dtype_size(t.dtype()))));
  REDUCE_ASSIGN(Tensor shape, Tensor::from_vector(DType::Int64, {static_cast<int64_t>(t.rank())}, t.shape()));
  Node node;
  node.name = init.name + "_fill";
  node.op_type = "ConstantOfShape";
  node.inputs = {shape_name};
  node.outputs = {init.name};
  Attribute a;
  a.name = "value";
  a.kind = Attribute::Kind::Tensor;
  a.t = std::move(value);
  node.attributes.push_back(std::move(a));
  Initializer dims;
  dims.name = shape_name;
  dims.tensor = std::move(shape);
  return std::pair{std::move(node), std::move(dims)};
}

}  // namespace

FillNodes fills_as_nodes(const Model& model, const std::map<std::string, double, std::less<>>& filled, size_t min_bytes) {
  FillNodes out{model, {}};
  const int64_t opset = model.opset("").value_or(0);
  if (opset < 9 || filled.empty()) return out;
  Graph& g = out.model.graph;
  std::unordered_set<std::string> taken;
  collect_names(g, taken);
  std::vector<Node> nodes;
  std::vector<Initializer> kept;
  for (Initializer& init : g.initializers) {
    const Tensor& t = init.tensor;
    const bool small = filled.count(init.name) && t.byte_size() >= min_bytes && t.elements() > 0 &&
                       takes(t.dtype(), opset) && !is_graph_input(g, init.name);
    if (small)
      if (auto made = fill_node(init, fresh_name(init.name + "_shape", taken))) {
        out.replaced.push_back(init.name);
        nodes.push_back(std::move(made->first));
        kept.push_back(std::move(made->second));
        continue;
      }
    kept.push_back(std::move(init));
  }
  g.initializers = std::move(kept);
  // Before every node that reads them: the graph stays in topological order.
  g.nodes.insert(g.nodes.begin(), std::make_move_iterator(nodes.begin()), std::make_move_iterator(nodes.end()));
  std::sort(out.replaced.begin(), out.replaced.end());
  return out;
}

}  // namespace reduce
