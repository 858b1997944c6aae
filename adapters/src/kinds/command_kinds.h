// What `cmd:` and `check:` share: a command template, and nodes to keep in FP32 in brackets.
#pragma once

#include "kinds/engine_kinds.h"

namespace reduce::kinds {

// `NAME[fp32=...]:TEMPLATE`.
Expected<EngineSpec> parse_command(const SpecText& text);
// "[fp32=...]:TEMPLATE".
std::string print_command(const EngineSpec& spec);
// Whether the template passes the FP32 nodes on ({fp32_nodes} or {fp32_nodes_file}).
bool command_controls_precision(const EngineSpec& spec);

}  // namespace reduce::kinds
