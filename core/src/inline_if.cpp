// Inlining the taken branch of If nodes into the enclosing graph.
#include "core/inline_if.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "subgraph_names.h"

namespace reduce {

namespace {

using detail::NameMap;
using detail::TakenNames;
using detail::mapped;

// The nodes that replace `if_node` when it takes `branch`; weights and value_info go to `g`.
std::vector<Node> inline_branch(Graph& g, const Node& if_node, const Graph& branch, TakenNames& taken) {
  const std::string prefix = if_node.name.empty() ? (if_node.outputs.empty() ? "If" : if_node.outputs[0]) : if_node.name;
  NameMap map;
  std::unordered_set<std::string> produced;
  for (const auto& n : branch.nodes)
    for (const auto& o : n.outputs)
      if (!o.empty()) produced.insert(o);
  // A returned value computed in the branch takes the If output's name (the first time).
  std::unordered_set<std::string> outputs_taken;
  for (size_t i = 0; i < branch.outputs.size() && i < if_node.outputs.size(); ++i) {
    const std::string& v = branch.outputs[i].name;
    if (produced.count(v) && !map.count(v) && !if_node.outputs[i].empty() && outputs_taken.insert(if_node.outputs[i]).second)
      map[v] = if_node.outputs[i];
  }
  // Other values defined in the branch keep their names unless taken.
  auto define = [&](const std::string& v) {
    if (!v.empty() && !map.count(v)) map[v] = TakenNames::fresh(taken.values, prefix, v);
  };
  for (const auto& init : branch.initializers) define(init.name);
  for (const auto& n : branch.nodes)
    for (const auto& o : n.outputs) define(o);

  for (const auto& init : branch.initializers) g.initializers.push_back({map.at(init.name), init.tensor, init.doc_string});
  std::unordered_set<std::string> described;
  for (const auto& vi : g.value_info) described.insert(vi.name);
  for (const auto& vi : branch.value_info)
    if (map.count(vi.name) && described.insert(map.at(vi.name)).second) {
      ValueInfo copy = vi;
      copy.name = map.at(vi.name);
      g.value_info.push_back(std::move(copy));
    }

  std::vector<Node> out;
  for (const Node& n : branch.nodes) out.push_back(detail::copied_node(n, map, taken, prefix));
  // Outputs the branch returns without computing them (an outer value, a weight, a value returned
  // twice): an Identity gives the If output its value.
  for (size_t i = 0; i < branch.outputs.size() && i < if_node.outputs.size(); ++i) {
    const std::string source = mapped(map, branch.outputs[i].name);
    if (if_node.outputs[i].empty() || source == if_node.outputs[i]) continue;
    Node identity;
    identity.name = TakenNames::fresh(taken.nodes, prefix, "Identity_output_" + std::to_string(i));
    identity.op_type = "Identity";
    identity.inputs = {source};
    identity.outputs = {if_node.outputs[i]};
    out.push_back(std::move(identity));
  }
  return out;
}

size_t count_in(const Graph& g) {
  size_t n = 0;
  for (const auto& node : g.nodes)
    for (const auto& a : node.attributes) {
      if (a.g) n += a.g->nodes.size() + count_in(*a.g);
      for (const auto& sub : a.graphs) n += sub->nodes.size() + count_in(*sub);
    }
  return n;
}

}  // namespace

InlineResult inline_if_nodes(Model& model, const std::function<std::optional<bool>(const std::string&)>& condition) {
  Graph& g = model.graph;
  InlineResult result;
  TakenNames taken(g);
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size());
  for (Node& n : g.nodes) {
    const bool is_if = is_if_node(n) && !n.inputs.empty();
    const std::optional<bool> taken_branch = is_if ? condition(n.inputs[0]) : std::nullopt;
    const Attribute* branch = taken_branch ? n.attribute(*taken_branch ? "then_branch" : "else_branch") : nullptr;
    if (!branch || !branch->g) {
      nodes.push_back(std::move(n));
      continue;
    }
    std::vector<Node> body = inline_branch(g, n, *branch->g, taken);
    ++result.inlined;
    result.body_nodes += body.size();
    for (auto& b : body) nodes.push_back(std::move(b));
  }
  g.nodes = std::move(nodes);
  return result;
}

size_t count_body_nodes(const Graph& graph) { return count_in(graph); }

bool is_if_node(const Node& node) { return node.op_type == "If" && (node.domain.empty() || node.domain == "ai.onnx"); }

bool has_if_node(const Graph& graph) { return std::any_of(graph.nodes.begin(), graph.nodes.end(), is_if_node); }

}  // namespace reduce
