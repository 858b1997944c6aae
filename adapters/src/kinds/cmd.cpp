// `cmd[fp32=...]:TEMPLATE`: a command per model run (docs/engine.md, "External engines"); also what
// `cmd:` and `check:` share.
#include "reproduction/scripts.h"
#include "kinds/command_kinds.h"
#include "factories/engine_factories.h"

namespace reduce::kinds {

Expected<EngineSpec> parse_command(const SpecText& text) {
  EngineSpec spec;
  const std::string name(text.name);
  if (text.bracket) {
    if (text.bracket->substr(0, 5) != "fp32=")
      return make_error("unknown option '" + std::string(*text.bracket) + "' in " + name + "[...] (known: fp32=NODE+NODE|@FILE)");
    REDUCE_ASSIGN(spec.fp32_nodes, parse_fp32_nodes(text.bracket->substr(5)));
  }
  if (text.rest.find_first_not_of(" \t") == std::string_view::npos)
    return make_error("'" + name + "' needs a command template: " + name + ":TEMPLATE");
  spec.command = std::string(text.rest);
  return spec;
}

std::string print_command(const EngineSpec& spec) {
  return (spec.fp32_nodes.empty() ? "" : "[fp32=" + to_string(spec.fp32_nodes) + "]") + ":" + spec.command;
}

bool command_controls_precision(const EngineSpec& spec) {
  return spec.command.find("{fp32_nodes}") != std::string::npos || spec.command.find("{fp32_nodes_file}") != std::string::npos;
}

const KindOps Cmd = {
    .parse = parse_command,
    .print = print_command,
    .make = [](const EngineSpec& spec, const EngineEnvironment& environment) -> Expected<std::unique_ptr<Engine>> {
      return make_command_engine(spec.command, environment, spec.fp32_nodes);
    },
    .fp32 = [](EngineSpec& spec) { return &spec.fp32_nodes; },
    .controls_precision = command_controls_precision,
    .reproduce = repro::command_scripts,
};

}  // namespace reduce::kinds
