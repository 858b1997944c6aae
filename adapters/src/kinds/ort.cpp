// `ort[:OPTIONS]`: ONNX Runtime in a persistent Node.js worker.
#include "reproduction/scripts.h"
#include "kinds/engine_kinds.h"
#include "spec/engine_factories.h"

namespace reduce::kinds {

const KindOps Ort = {
    .parse = [](const SpecText& text) -> Expected<EngineSpec> {
      REDUCE_TRY(no_bracket(text));
      EngineSpec spec;
      REDUCE_ASSIGN(spec.ort, parse_ort_options(text.rest));
      return spec;
    },
    .print = [](const EngineSpec& spec) { return colon_options(to_string(spec.ort)); },
    .make = [](const EngineSpec& spec, const EngineEnvironment& environment) -> Expected<std::unique_ptr<Engine>> { return make_ort_engine(spec.ort, environment); },
    .reproduce = [](const EngineSpec& spec, const ReproductionContext& context) {
      auto files = repro::ort_python(spec, context);
      for (auto& f : repro::ort_node(spec, context)) files.push_back(std::move(f));
      return files;
    },
};

}  // namespace reduce::kinds
