// A canonical text form of a graph's structure (op types, attributes, wiring), independent of node
// and value names and of node order: reproducers with the same form are the same bug's.
#pragma once

#include <string>

#include "core/model.h"

namespace reduce {

std::string canonical_form(const Graph& graph);

}  // namespace reduce
