// `isolated:SPEC`: SPEC in a worker process. A wrapper: what it computes, and in which precision,
// is its inner spec's (EngineSpec::innermost).
#include "kinds/engine_kinds.h"
#include "factories/engine_factories.h"

namespace reduce::kinds {

const KindOps Isolated = {
    .parse = [](const SpecText& text) -> Expected<EngineSpec> {
      REDUCE_TRY(no_bracket(text));
      if (text.rest.empty()) return make_error("'isolated' needs an engine: isolated:SPEC");
      auto inner = parse_engine_spec(text.rest);
      if (!inner) return make_error(inner.error().what);
      if (inner->kind == EngineKind::Isolated) return make_error("an isolated engine is already isolated");
      if (!inner->gives_values()) return make_error("a check: script is not an engine; it cannot be isolated");
      if (inner->kind == EngineKind::Ort || inner->kind == EngineKind::OrtWeb)
        return make_error("'" + std::string(inner->traits().name) + "' runs in a worker process already; use it without isolated:");
      EngineSpec spec;
      spec.inner = std::make_shared<const EngineSpec>(std::move(*inner));
      return spec;
    },
    .print = [](const EngineSpec& spec) { return ":" + (spec.inner ? to_string(*spec.inner) : std::string()); },
    .make = [](const EngineSpec& spec, const EngineEnvironment& environment) -> Expected<std::unique_ptr<Engine>> {
      return make_isolated_engine(to_string(*spec.inner), environment);
    },
};

}  // namespace reduce::kinds
