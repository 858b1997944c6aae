// make_engine: parses an engine spec and builds the engine it names.
#include "engine/engine_spec.h"

#include "engine/optimized.h"

namespace reduce {

Expected<std::unique_ptr<Engine>> make_engine(std::string_view spec, const EngineEnvironment& environment) {
  const std::string_view kind = spec.substr(0, spec.find(':'));
  const bool has_options = spec.find(':') != std::string_view::npos;
  if (kind == "ref") {
    if (has_options) return Error{std::string(spec), "engine 'ref' takes no options"};
    return make_reference_engine(environment.threads);
  }
  if (kind == "opt") {
    OptimizedOptions options;
    if (has_options) {
      auto parsed = parse_optimized_options(spec.substr(spec.find(':') + 1));
      if (!parsed) return Error{std::string(spec), parsed.error().what};
      options = std::move(*parsed);
    }
    options.threads = environment.threads;
    return make_optimized_engine(options);
  }
  return Error{std::string(spec), "unknown engine (known: ref, opt)"};
}

std::vector<std::pair<std::string, std::string>> engine_spec_help() {
  return {{"ref", "the exact reference interpreter"},
          {"opt[:OPTIONS]",
           "the optimized engine: graph passes and fused kernels; OPTIONS is a comma list of fp32|fp16|bf16, "
           "fault=NAME[+NAME...], no-PASS (docs/engine.md, docs/faults.md)"}};
}

}  // namespace reduce
