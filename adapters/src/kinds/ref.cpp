// `ref`: the reference interpreter.
#include "kinds/engine_kinds.h"

namespace reduce::kinds {

const KindOps Ref = {
    .parse = parse_no_options,
    .print = [](const EngineSpec&) { return std::string(); },
    .make = [](const EngineSpec&, const EngineEnvironment& environment) -> Expected<std::unique_ptr<Engine>> {
      return make_reference_engine(environment.threads, environment.limits());
    },
};

}  // namespace reduce::kinds
