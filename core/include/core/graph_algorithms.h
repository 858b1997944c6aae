// Graph algorithms on a GraphIndex's node graph (Boost.Graph): reachability and (post-)dominators,
// each optionally restricted to a subset of the nodes.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <limits>
#include <span>
#include <vector>

#include "core/graph_index.h"

namespace reduce {

// A subset of a graph's nodes, indexed by node; an empty mask means every node.
using NodeMask = std::vector<bool>;

// Stands for the virtual entry (dominators) or exit (post-dominators) in a dominator tree.
inline constexpr size_t kVirtualNode = std::numeric_limits<size_t>::max();

// The `start` nodes and every node they reach by following producers (ancestors) or readers
// (descendants) through nodes of `within` only. A mask indexed by node.
NodeMask ancestors(const GraphIndex& index, std::span<const size_t> start, const NodeMask& within = {});
NodeMask descendants(const GraphIndex& index, std::span<const size_t> start, const NodeMask& within = {});
// Ancestors along chosen values only: from each node reached (the `start` nodes first), the
// producer of every value it reads (inputs and implicit inputs) that `through` accepts, when that
// producer is in `within`. For walks that depend on which value links two nodes (a cut at some of a
// node's inputs, only the values whose error fails), which node-level edges cannot tell.
NodeMask ancestors_through(const GraphIndex& index, std::span<const size_t> start,
                           const std::function<bool(std::string_view value)>& through, const NodeMask& within = {});

// The immediate dominator of each node of `within` in the subgraph it induces, where a virtual
// entry feeds every node without a producer in `within` (kVirtualNode when that entry is the
// immediate dominator). Nodes outside `within` get kVirtualNode.
std::vector<size_t> immediate_dominators(const GraphIndex& index, const NodeMask& within = {});
// The same for post-dominance: a virtual exit reads every node without a reader in `within`, so a
// node's immediate post-dominator is the first node all its paths to the outputs go through.
std::vector<size_t> immediate_post_dominators(const GraphIndex& index, const NodeMask& within = {});

}  // namespace reduce
