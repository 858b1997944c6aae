// The reduced graph as a picture: Graphviz source, and SVG when `dot` is installed.
#pragma once

#include <filesystem>
#include <string>

#include "core/model.h"

namespace reduce {

// The graph in Graphviz syntax (nodes by op type; cut inputs and outputs as ellipses).
std::string graph_dot(const Graph& graph);

// Renders `dot_file` to `svg_file` with Graphviz `dot` (no shell: argv as is); false when it cannot.
bool render_svg(const std::filesystem::path& dot_file, const std::filesystem::path& svg_file);

}  // namespace reduce
