// Command templates (`cmd:` and `check:` engines, --slot-env): split into argv once, placeholders filled per run.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.h"
#include "core/status.h"
#include "engine/fp32_nodes.h"

namespace reduce {

// Splits a template into argv tokens like a POSIX shell's word splitting, without any expansion:
// tokens are separated by whitespace; '...' keeps everything literally; "..." keeps everything but
// `\"` and `\\`; outside quotes a backslash escapes the next character. An unterminated quote or
// a trailing backslash is an error, as is an empty template.
Expected<std::vector<std::string>> split_command_template(std::string_view command_template);

// Placeholder values by name without braces: {"model", "/tmp/a b/model.onnx"}.
using Placeholders = std::map<std::string, std::string, std::less<>>;

// Replaces every `{name}` of `placeholders` in each token by plain string replacement. The result
// is never split again, so a value with spaces or shell syntax stays one argument, intact.
// Braces that name no placeholder are left as they are.
std::vector<std::string> fill_placeholders(const std::vector<std::string>& tokens, const Placeholders& placeholders);
std::string fill_placeholders(std::string_view text, const Placeholders& placeholders);

// The FP32 node set of a `cmd[fp32=...]:`/`check[fp32=...]:` run, restricted to the nodes of the
// model it runs (a reduced candidate lacks the others): writes `file` (one name per line, empty
// when none) and adds {fp32_nodes} (the names, comma-separated) and {fp32_nodes_file} (`file`).
Status add_fp32_placeholders(Placeholders& placeholders, const Fp32Nodes& nodes, const Graph& graph,
                             const std::filesystem::path& file);

}  // namespace reduce
