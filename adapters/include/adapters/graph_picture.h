// The reduced graph as a picture: Graphviz source, and SVG when `dot` is installed.
#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <string>

#include "core/model.h"

namespace reduce {

// The graph in Graphviz syntax (nodes by op type; cut inputs and outputs as ellipses).
std::string graph_dot(const Graph& graph);

// Graphs with more nodes are not drawn: dot's layout time grows much faster than the graph (a
// 5 000-node chain took minutes), and such a picture helps nobody.
inline constexpr size_t kMaxDrawnNodes = 1000;
// dot gets this long before its process group is killed.
inline constexpr double kDrawingSeconds = 30;

// Renders `dot_file` (a graph of `nodes` nodes) to `svg_file` with Graphviz `dot` (no shell: argv
// as is), within kDrawingSeconds, in its own process group, killed when `cancel` becomes true.
// False (and no svg_file, not even an older one) when it cannot or should not.
bool render_svg(const std::filesystem::path& dot_file, const std::filesystem::path& svg_file, size_t nodes,
                const std::atomic<bool>* cancel = nullptr);

}  // namespace reduce
