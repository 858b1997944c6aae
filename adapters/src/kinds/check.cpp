// `check[fp32=...]:TEMPLATE`: a script that decides by itself (the oracle runs it: CheckScript).
#include "reproduction/scripts.h"
#include "kinds/command_kinds.h"

namespace reduce::kinds {

const KindOps Check = {
    .parse = parse_command,
    .print = print_command,
    .make = [](const EngineSpec& spec, const EngineEnvironment&) -> Expected<std::unique_ptr<Engine>> {
      return Error{to_string(spec), "a check: script decides by itself; it is not an engine that computes outputs"};
    },
    .fp32 = [](EngineSpec& spec) { return &spec.fp32_nodes; },
    .controls_precision = command_controls_precision,
    .reproduce = repro::command_scripts,
};

}  // namespace reduce::kinds
