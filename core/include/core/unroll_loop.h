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

// Whether a node is ONNX's Loop (domain "" or "ai.onnx"), and whether a graph has one at its top level.
bool is_loop_node(const Node& node);
bool has_loop_node(const Graph& graph);

// Gives every top-level Loop one more scan output: its iteration number at each iteration, so a
// run of the model tells how many iterations each Loop made (the length of that output). Returns,
// per Loop, its position in graph.nodes and the name of the new output. The model computes what
// it computed before.
std::vector<std::pair<size_t, std::string>> add_trip_counters(Model& model);

// Replaces every top-level Loop whose trip count `trips(position in graph.nodes)` knows by that
// many copies of its body, in order: iteration i reads the loop-carried values iteration i-1
// produced (the Loop's inputs for the first), its iteration number is a weight, its condition
// is the previous iteration's; the Loop's carried outputs are the last iteration's values and each
// scan output is the Concat of the iterations' values (Unsqueezed on axis 0). Body weights move
// to the graph once; body values keep their names where free (otherwise `<loop>/<i>/<name>`,
// made unique). A Loop stays when unrolling it would add more than `max_new_nodes` nodes or when
// it made no iteration but has scan outputs (their element shape is unknown).
UnrollResult unroll_loop_nodes(Model& model, const std::function<std::optional<int64_t>(size_t)>& trips,
                               size_t max_new_nodes = 100000);

}  // namespace reduce
