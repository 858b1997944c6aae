// `check[fp32=...]:TEMPLATE`: a script that decides by itself (the oracle runs it: CheckScript).
#include "reproduction/scripts.h"
#include "kinds/command_kinds.h"

namespace reduce::kinds {

const KindOps Check = {
    parse_command,
    print_command,
    [](const EngineSpec& spec, const EngineEnvironment&) -> Expected<std::unique_ptr<Engine>> {
      return Error{to_string(spec), "a check: script decides by itself; it is not an engine that computes outputs"};
    },
    [](EngineSpec& spec) { return &spec.fp32_nodes; },
    nullptr,
    command_controls_precision,
    nullptr,
    nullptr,
    repro::command_scripts,
};

}  // namespace reduce::kinds
