// Names across subgraph boundaries, for the control-flow rewrites (If inlining, Loop unrolling):
// renaming outer-scope references inside nested graphs and picking fresh names in a graph.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/model.h"

namespace reduce::detail {

using NameMap = std::unordered_map<std::string, std::string>;

inline std::string mapped(const NameMap& map, const std::string& name) {
  auto it = map.find(name);
  return it == map.end() ? name : it->second;
}

inline void rename_in_graph(Graph& g, const NameMap& map);

// Renames the outer-scope references of the node's subgraph attributes.
inline void rename_in_attributes(Node& n, const NameMap& map) {
  for (auto& a : n.attributes) {
    if (a.g) {
      auto copy = std::make_shared<Graph>(*a.g);
      rename_in_graph(*copy, map);
      a.g = std::move(copy);
    }
    for (auto& sub : a.graphs) {
      auto copy = std::make_shared<Graph>(*sub);
      rename_in_graph(*copy, map);
      sub = std::move(copy);
    }
  }
}

// Renames references to outer values in a nested graph; names it defines itself shadow the map.
inline void rename_in_graph(Graph& g, const NameMap& map) {
  NameMap local = map;
  for (const auto& vi : g.inputs) local.erase(vi.name);
  for (const auto& init : g.initializers) local.erase(init.name);
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs) local.erase(o);
  if (local.empty()) return;
  for (auto& n : g.nodes) {
    for (auto& i : n.inputs) i = mapped(local, i);
    for (auto& i : n.implicit_inputs) i = mapped(local, i);
    rename_in_attributes(n, local);
  }
  for (auto& o : g.outputs) o.name = mapped(local, o.name);
}

// A node's implicit inputs: the outer-scope names of its subgraph attributes, in order, once each.
inline std::vector<std::string> implicit_inputs_of(const Node& node) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  auto add = [&](const Graph& sub) {
    for (auto& name : outer_scope_names(sub))
      if (seen.insert(name).second) names.push_back(std::move(name));
  };
  for (const auto& a : node.attributes) {
    if (a.g) add(*a.g);
    for (const auto& sg : a.graphs) add(*sg);
  }
  return names;
}

// Every name the graph uses at its top level: values (inputs, outputs, initializers, node inputs
// and outputs, value_info) and node names.
struct TakenNames {
  std::unordered_set<std::string> values, nodes;

  explicit TakenNames(const Graph& g) {
    for (const auto& vi : g.inputs) values.insert(vi.name);
    for (const auto& vi : g.outputs) values.insert(vi.name);
    for (const auto& vi : g.value_info) values.insert(vi.name);
    for (const auto& init : g.initializers) values.insert(init.name);
    for (const auto& n : g.nodes) {
      nodes.insert(n.name);
      for (const auto& v : n.inputs) values.insert(v);
      for (const auto& v : n.outputs) values.insert(v);
      for (const auto& v : n.implicit_inputs) values.insert(v);
    }
  }

  static std::string fresh(std::unordered_set<std::string>& taken, const std::string& prefix, const std::string& name) {
    if (!name.empty() && taken.insert(name).second) return name;
    std::string candidate = prefix + "/" + name;
    for (size_t k = 1; !taken.insert(candidate).second; ++k) candidate = prefix + "/" + name + "_" + std::to_string(k);
    return candidate;
  }
};

// A copy of a body node for the enclosing graph: a fresh node name (`prefix/...` when taken), its
// values and the outer references of its subgraphs renamed by `map`.
inline Node copied_node(const Node& n, const NameMap& map, TakenNames& taken, const std::string& prefix) {
  Node copy = n;
  copy.name = TakenNames::fresh(taken.nodes, prefix, n.name.empty() ? n.op_type : n.name);
  for (auto& v : copy.inputs) v = mapped(map, v);
  for (auto& v : copy.outputs) v = mapped(map, v);
  for (auto& v : copy.implicit_inputs) v = mapped(map, v);
  rename_in_attributes(copy, map);
  return copy;
}

}  // namespace reduce::detail
