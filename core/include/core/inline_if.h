// Inlining If nodes: replacing an If by the branch it takes, its body's nodes becoming nodes of the
// enclosing graph (the control-flow step of a reduction: a node inside a body is not a unit of
// reduction, a node of the top-level graph is).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/model.h"

namespace reduce {

struct InlineResult {
  size_t inlined = 0;     // If nodes replaced by a branch
  size_t body_nodes = 0;  // nodes that came out of those branches (Identity nodes for outputs included)
};

// Replaces every If node of the top-level graph whose condition `condition(name)` knows by the
// branch it selects. The branch's nodes take the If's place in the node order; its values keep
// their names unless a name is taken in the graph (then `<if node>/<name>`, made unique), the
// values it returns are renamed to the If's outputs (an Identity when a branch returns a value
// it does not compute), its weights and value_info move to the graph, and references to renamed
// values inside nested subgraphs follow (names a nested graph defines itself shadow them).
// If nodes whose condition is unknown are kept; nested Ifs inside an inlined branch come out as
// top-level If nodes (a next call can inline them once their condition is known).
InlineResult inline_if_nodes(Model& model, const std::function<std::optional<bool>(const std::string&)>& condition);

// Whether a node is ONNX's If (domain "" or "ai.onnx"), and whether a graph has one at its top level.
bool is_if_node(const Node& node);
bool has_if_node(const Graph& graph);

// Nodes inside subgraphs (bodies of If, Loop, Scan, at any depth) of the top-level graph.
size_t count_body_nodes(const Graph& graph);

}  // namespace reduce
