// The nodes an engine running in reduced precision keeps in FP32 (`fp32=NAME+NAME` or `fp32=@FILE`
// in an engine spec): parsing, the canonical form, and the check against a model's node names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/model.h"
#include "core/status.h"

namespace reduce {

struct Fp32Nodes {
  std::vector<std::string> names;  // ONNX node names, each once, in the order given
  std::string file;                // the file they were read from ("" when given inline): errors name it

  bool empty() const { return names.empty(); }
  bool contains(std::string_view name) const;
  // The names that name a node of `graph` (subgraph bodies included), in the order given.
  std::vector<std::string> present_in(const Graph& graph) const;
};

// Parses the value of `fp32=`: `NAME+NAME...` (`%2B`, `%2C`, `%25`, ... decode to `+`, `,`, `%`) or
// `@FILE` (one name per line; blank lines and surrounding whitespace are ignored). Errors are one
// line: an empty list, an unreadable file (Error::where is the file), a file without names.
Expected<Fp32Nodes> parse_fp32_nodes(std::string_view value);
// The canonical value: the names inline, `+`-separated, with `%`, `+`, `,`, `]` and a leading `@`
// escaped (parse_fp32_nodes reads it back to the same names; the file is not kept).
std::string to_string(const Fp32Nodes& nodes);

// Fails on the first name that is not a node of `graph` (subgraph bodies included): one line whose
// `where` is the file the names came from, if any.
Status check_fp32_nodes(const Fp32Nodes& nodes, const Graph& graph);

}  // namespace reduce
