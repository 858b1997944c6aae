// NodeGraph: a GraphIndex's producer -> reader edges as a Boost.Graph, for graph_algorithms.cpp.
#pragma once

#include <boost/graph/adjacency_list.hpp>

namespace reduce {

struct NodeGraph {
  // Vertex k is node k; bidirectional, so algorithms can walk readers and producers alike.
  using Type = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
  Type graph;
};

}  // namespace reduce
