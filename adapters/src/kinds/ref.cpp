// `ref`: the reference interpreter.
#include "kinds/engine_kinds.h"

namespace reduce::kinds {

const KindOps Ref = {
    parse_no_options,
    [](const EngineSpec&) { return std::string(); },
    [](const EngineSpec&, const EngineEnvironment& environment) -> Expected<std::unique_ptr<Engine>> {
      return make_reference_engine(environment.threads, environment.limits());
    },
};

}  // namespace reduce::kinds
