// `ort[:OPTIONS]`: ONNX Runtime in a persistent Node.js worker.
#include "kinds/engine_kinds.h"
#include "spec/engine_factories.h"

namespace reduce::kinds {

const KindOps Ort = {
    [](const SpecText& text) -> Expected<EngineSpec> {
      REDUCE_TRY(no_bracket(text));
      EngineSpec spec;
      REDUCE_ASSIGN(spec.ort, parse_ort_options(text.rest));
      return spec;
    },
    [](const EngineSpec& spec) { return colon_options(to_string(spec.ort)); },
    [](const EngineSpec& spec, const EngineEnvironment& environment) -> Expected<std::unique_ptr<Engine>> { return make_ort_engine(spec.ort, environment); },
};

}  // namespace reduce::kinds
