// Printing where error is born: the layerwise table with local error next to accumulated, and the
// findings (first non-finite value, the nodes that add the most error, where an output's error
// comes from), as `reduce compare` and report.md show them.
#pragma once

#include <ostream>
#include <string>

#include "oracle/error_origin.h"

namespace reduce {

// The table (Markdown): every failing value and the first few, or every value when `all`.
void print_error_table(const ErrorOrigin& origin, const Graph& graph, bool all, std::ostream& out);

// One line per finding ("first diverging node: ...", "non-finite born at: ...", ...).
void print_error_findings(const ErrorOrigin& origin, const Graph& graph, std::ostream& out);

// The report.md section: the findings and the rows of the culprits; `chart` names error.svg when drawn.
std::string error_origin_markdown(const ErrorOrigin& origin, const Graph& graph, const std::string& chart);

// "Name (Op)", or the value name for unnamed nodes.
std::string describe_node(const Graph& graph, const ValueError& value);

}  // namespace reduce
