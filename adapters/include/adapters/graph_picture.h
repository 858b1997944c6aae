// The reduced graph as a picture: Graphviz source, and SVG and PNG when `dot` is installed.
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

// Which pictures render_graph drew.
struct GraphPictures {
  bool svg = false;
  bool png = false;  // a PNG for places that take no SVG (GitHub issues)
};

// Renders `dot_file` (a graph of `nodes` nodes) to `svg_file` and, when given, `png_file`, in one run
// of Graphviz `dot` (no shell: argv as is), within kDrawingSeconds, in its own process group, killed
// when `cancel` becomes true. Each picture is written under a temporary name and renamed into place;
// none drawn (and no older one left) when it cannot or should not.
GraphPictures render_graph(const std::filesystem::path& dot_file, const std::filesystem::path& svg_file,
                           const std::filesystem::path& png_file, size_t nodes,
                           const std::atomic<bool>* cancel = nullptr);

}  // namespace reduce
