// GraphIndex: producers, consumers and topological order of one graph's nodes (graph_algorithms.h
// walks them).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/model.h"

namespace reduce {

struct NodeGraph;  // the same edges as a Boost.Graph (core/src/node_graph.h)

class GraphIndex {
 public:
  // Fails when a node reads a value that nothing defines (outside `outer_scope`), when a value
  // is produced twice, or when the nodes form a cycle.
  static Expected<GraphIndex> build(const Graph& graph, std::span<const std::string> outer_scope = {});

  const Graph& graph() const { return *graph_; }
  size_t node_count() const { return preds_.size(); }

  // The node producing a value; nullopt for graph inputs, initializers and outer-scope values.
  std::optional<size_t> producer(std::string_view value) const;
  // Nodes that read a value, explicitly or through a subgraph; in increasing node index.
  std::span<const size_t> consumers(std::string_view value) const;
  bool is_graph_output(std::string_view value) const;

  // Direct data dependencies between nodes (deduplicated, sorted).
  std::span<const size_t> predecessors(size_t node) const { return preds_[node]; }
  std::span<const size_t> successors(size_t node) const { return succs_[node]; }
  // Nodes in a topological order that prefers lower node indices (stable for a given graph).
  const std::vector<size_t>& topological_order() const { return topo_; }
  // Position of each node in topological_order().
  size_t topological_position(size_t node) const { return topo_pos_[node]; }

  // For graph_algorithms.cpp, which sees its definition.
  const NodeGraph& node_graph() const { return *node_graph_; }

 private:
  const Graph* graph_ = nullptr;
  std::unordered_map<std::string_view, size_t> producer_;
  std::unordered_map<std::string_view, std::vector<size_t>> consumers_;
  std::unordered_map<std::string_view, bool> outputs_;
  std::vector<std::vector<size_t>> preds_;
  std::vector<std::vector<size_t>> succs_;
  std::vector<size_t> topo_;
  std::vector<size_t> topo_pos_;
  std::shared_ptr<const NodeGraph> node_graph_;  // shared: immutable once built
};

}  // namespace reduce
