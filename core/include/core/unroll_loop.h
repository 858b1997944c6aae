// Unrolling Loop nodes: replacing a Loop by as many copies of its body as the recorded run made
// iterations, so that the nodes of each iteration become nodes of the enclosing graph (units of
// reduction; later iterations the failure does not need are removed like any other node).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/model.h"

namespace reduce {

struct UnrollResult {
  size_t unrolled = 0;    // Loop nodes replaced by their iterations
  size_t iterations = 0;  // body copies made, over all of them
  size_t body_nodes = 0;  // nodes that came out (Identity, Unsqueeze and Concat of the outputs included)
  std::vector<std::string> skipped;  // one line per Loop kept although its trip count was known, with why
};

// Whether a node is ONNX's Loop or Scan (domain "" or "ai.onnx"), and whether a graph has one at
// its top level.
bool is_loop_node(const Node& node);
bool has_loop_node(const Graph& graph);
bool is_scan_node(const Node& node);
bool has_loop_or_scan(const Graph& graph);

// A Scan's trip count: the length of its first scan input on its scan axis, from `shape_of(name)`
// (nullopt when the node is not a well-formed Scan or the shape is unknown).
std::optional<int64_t> scan_trips(const Node& scan, const std::function<std::optional<Shape>(const std::string&)>& shape_of);

// Gives every top-level Loop one more scan output: its iteration number at each iteration, so a
// run of the model tells how many iterations each Loop made (the length of that output). Returns,
// per Loop, its position in graph.nodes and the name of the new output. The model computes what
// it computed before.
std::vector<std::pair<size_t, std::string>> add_trip_counters(Model& model);

// Replaces every top-level Loop and Scan whose trip count `trips(position in graph.nodes)` knows
// by that many copies of its body, in order: iteration i reads the loop-carried (state) values
// iteration i-1 produced (the node's inputs for the first); a Loop iteration's number is a
// weight and its condition the previous iteration's; a Scan iteration reads slice i of each scan
// input (a Gather on its scan axis, from the end when reversed). The carried outputs are the last
// iteration's values and each scan output is the Concat of the iterations' values, Unsqueezed on
// its scan axis (axis 0 for Loop; in reverse order for a reversed Scan output). Body weights move
// to the graph once; body values keep their names where free (otherwise `<node>/<i>/<name>`,
// made unique). A node stays (with the reason in `skipped`) when unrolling it would add more than
// `max_new_nodes` nodes, when it made no iteration but has scan outputs (their element shape is
// unknown), when its body does not match its inputs, and for opset 8's batched Scan.
UnrollResult unroll_loop_nodes(Model& model, const std::function<std::optional<int64_t>(size_t)>& trips,
                               size_t max_new_nodes = 100000);

}  // namespace reduce
