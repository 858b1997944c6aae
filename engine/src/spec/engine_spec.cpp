// make_engine: parses an engine spec and builds the engine it names.
#include "engine/engine_spec.h"

namespace reduce {

Expected<std::unique_ptr<Engine>> make_engine(std::string_view spec, const EngineEnvironment& environment) {
  const std::string_view kind = spec.substr(0, spec.find(':'));
  const bool has_options = spec.find(':') != std::string_view::npos;
  if (kind == "ref") {
    if (has_options) return Error{std::string(spec), "engine 'ref' takes no options"};
    return make_reference_engine(environment.threads);
  }
  return Error{std::string(spec), "unknown engine (known: ref)"};
}

std::vector<std::pair<std::string, std::string>> engine_spec_help() {
  return {{"ref", "the exact reference interpreter"}};
}

}  // namespace reduce
