// Builds producer/consumer maps, validates definitions, and orders nodes topologically.
#include "core/graph_index.h"

#include <algorithm>
#include <queue>
#include <unordered_set>

#include "node_graph.h"

namespace reduce {

Expected<GraphIndex> GraphIndex::build(const Graph& graph, std::span<const std::string> outer_scope) {
  GraphIndex ix;
  ix.graph_ = &graph;
  const size_t n = graph.nodes.size();
  ix.preds_.resize(n);
  ix.succs_.resize(n);

  std::unordered_set<std::string_view> defined(outer_scope.begin(), outer_scope.end());
  for (const auto& vi : graph.inputs) defined.insert(vi.name);
  for (const auto& init : graph.initializers) defined.insert(init.name);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& o : graph.nodes[i].outputs) {
      if (o.empty()) continue;
      if (!ix.producer_.emplace(o, i).second)
        return make_error("value '" + o + "' is produced by two nodes ('" + graph.nodes[ix.producer_[o]].name +
                          "' and '" + graph.nodes[i].name + "')");
    }
  }
  for (const auto& vi : graph.outputs) ix.outputs_[vi.name] = true;

  for (size_t i = 0; i < n; ++i) {
    const Node& node = graph.nodes[i];
    auto read = [&](const std::string& v) -> Status {
      if (v.empty()) return {};
      auto& cons = ix.consumers_[v];
      if (cons.empty() || cons.back() != i) cons.push_back(i);
      auto p = ix.producer_.find(v);
      if (p != ix.producer_.end()) {
        if (p->second == i) return make_error("node '" + node.name + "' (" + node.op_type + ") reads its own output '" + v + "'");
        ix.preds_[i].push_back(p->second);
        return {};
      }
      if (!defined.count(v))
        return make_error("node '" + node.name + "' (" + node.op_type + ") reads '" + v + "', which nothing defines");
      return {};
    };
    for (const auto& v : node.inputs) REDUCE_TRY(read(v));
    for (const auto& v : node.implicit_inputs) REDUCE_TRY(read(v));
    auto& p = ix.preds_[i];
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    for (size_t q : p) ix.succs_[q].push_back(i);
  }
  for (const auto& vi : graph.outputs)
    if (!vi.name.empty() && !defined.count(vi.name) && !ix.producer_.count(vi.name))
      return make_error("graph output '" + vi.name + "' is not produced by any node");

  // Kahn's algorithm with a min-heap, so the order is the file order whenever that is valid.
  std::vector<size_t> indegree(n);
  for (size_t i = 0; i < n; ++i) indegree[i] = ix.preds_[i].size();
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.push(i);
  ix.topo_.reserve(n);
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    ix.topo_.push_back(i);
    for (size_t s : ix.succs_[i])
      if (--indegree[s] == 0) ready.push(s);
  }
  if (ix.topo_.size() != n) {
    for (size_t i = 0; i < n; ++i)
      if (indegree[i] > 0)
        return make_error("the graph has a cycle through node '" + graph.nodes[i].name + "' (" + graph.nodes[i].op_type + ")");
  }
  ix.topo_pos_.resize(n);
  for (size_t k = 0; k < n; ++k) ix.topo_pos_[ix.topo_[k]] = k;
  auto node_graph = std::make_shared<NodeGraph>(NodeGraph{NodeGraph::Type(n)});
  for (size_t i = 0; i < n; ++i)
    for (size_t s : ix.succs_[i]) boost::add_edge(i, s, node_graph->graph);
  ix.node_graph_ = std::move(node_graph);
  return ix;
}

std::optional<size_t> GraphIndex::producer(std::string_view value) const {
  auto it = producer_.find(value);
  if (it == producer_.end()) return std::nullopt;
  return it->second;
}

std::span<const size_t> GraphIndex::consumers(std::string_view value) const {
  auto it = consumers_.find(value);
  if (it == consumers_.end()) return {};
  return it->second;
}

bool GraphIndex::is_graph_output(std::string_view value) const { return outputs_.count(value) > 0; }

}  // namespace reduce
