// Reachability by depth-first search on a filtered_graph, (post-)dominators by Lengauer-Tarjan.
#include "core/graph_algorithms.h"

#include <boost/graph/depth_first_search.hpp>
#include <boost/graph/dominator_tree.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/reverse_graph.hpp>

#include "node_graph.h"

namespace reduce {

namespace {

bool in_mask(const NodeMask& within, size_t node) { return within.empty() || within[node]; }

// filtered_graph's vertex predicate (it must be default-constructible, so no capturing lambda).
struct InMask {
  const NodeMask* within = nullptr;
  bool operator()(size_t v) const { return in_mask(*within, v); }
};

struct MarkDiscovered : boost::default_dfs_visitor {
  NodeMask* mark = nullptr;
  template <typename Vertex, typename G>
  void discover_vertex(Vertex v, const G&) const { (*mark)[v] = true; }
};

template <typename G>
NodeMask reach(const G& g, size_t node_count, std::span<const size_t> start, const NodeMask& within) {
  NodeMask mark(node_count, false);
  const boost::filtered_graph<G, boost::keep_all, InMask> walk(g, boost::keep_all(), InMask{&within});
  std::vector<boost::default_color_type> colors(node_count, boost::white_color);
  auto color = boost::make_iterator_property_map(colors.begin(), boost::get(boost::vertex_index, g));
  MarkDiscovered visitor;
  visitor.mark = &mark;
  for (size_t s : start)
    if (colors[s] == boost::white_color) boost::depth_first_visit(walk, s, visitor, color);
  return mark;
}

// Dominators of the subgraph `within` induces, seen from a virtual root: with `post`, the root is
// the exit and edges run from readers to producers (the reversed graph); else the root is the
// entry and edges run from producers to readers.
std::vector<size_t> dominators(const GraphIndex& index, const NodeMask& within, bool post) {
  const size_t n = index.node_count();
  std::vector<size_t> vertex_of(n, kVirtualNode), node_of;
  for (size_t i = 0; i < n; ++i)
    if (in_mask(within, i)) {
      vertex_of[i] = node_of.size();
      node_of.push_back(i);
    }
  const size_t root = node_of.size();
  NodeGraph::Type g(root + 1);
  for (size_t v = 0; v < root; ++v) {
    bool linked = false;
    for (size_t next : post ? index.successors(node_of[v]) : index.predecessors(node_of[v]))
      if (in_mask(within, next)) {
        boost::add_edge(vertex_of[next], v, g);
        linked = true;
      }
    if (!linked) boost::add_edge(root, v, g);
  }
  using Vertex = boost::graph_traits<NodeGraph::Type>::vertex_descriptor;
  std::vector<Vertex> idom(root + 1, boost::graph_traits<NodeGraph::Type>::null_vertex());
  boost::lengauer_tarjan_dominator_tree(
      g, boost::vertex(root, g), boost::make_iterator_property_map(idom.begin(), boost::get(boost::vertex_index, g)));
  std::vector<size_t> out(n, kVirtualNode);
  // Every vertex is reachable from the root in a DAG, so each one has an immediate dominator.
  for (size_t v = 0; v < root; ++v) out[node_of[v]] = idom[v] == root ? kVirtualNode : node_of[idom[v]];
  return out;
}

}  // namespace

NodeMask ancestors(const GraphIndex& index, std::span<const size_t> start, const NodeMask& within) {
  return reach(boost::make_reverse_graph(index.node_graph().graph), index.node_count(), start, within);
}

NodeMask descendants(const GraphIndex& index, std::span<const size_t> start, const NodeMask& within) {
  return reach(index.node_graph().graph, index.node_count(), start, within);
}

NodeMask ancestors_through(const GraphIndex& index, std::span<const size_t> start,
                           const std::function<bool(std::string_view value)>& through, const NodeMask& within) {
  NodeMask mark(index.node_count(), false);
  std::vector<size_t> stack;
  for (size_t s : start)
    if (!mark[s]) {
      mark[s] = true;
      stack.push_back(s);
    }
  const Graph& graph = index.graph();
  auto follow = [&](const std::string& value) {
    if (value.empty() || !through(value)) return;
    const auto p = index.producer(value);
    if (!p || mark[*p] || !in_mask(within, *p)) return;
    mark[*p] = true;
    stack.push_back(*p);
  };
  while (!stack.empty()) {
    const size_t n = stack.back();
    stack.pop_back();
    for (const auto& v : graph.nodes[n].inputs) follow(v);
    for (const auto& v : graph.nodes[n].implicit_inputs) follow(v);
  }
  return mark;
}

std::vector<size_t> immediate_dominators(const GraphIndex& index, const NodeMask& within) {
  return dominators(index, within, false);
}

std::vector<size_t> immediate_post_dominators(const GraphIndex& index, const NodeMask& within) {
  return dominators(index, within, true);
}

}  // namespace reduce
