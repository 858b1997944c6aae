// make_engine: builds the engine a parsed spec names (each kind's factory is in kinds/NAME.cpp).
#include "adapters/engine_spec.h"
#include "kinds/engine_kinds.h"

namespace reduce {

Expected<std::unique_ptr<Engine>> make_engine(const EngineSpec& spec, const EngineEnvironment& environment) {
  return kinds::ops(spec.kind).make(spec, environment);
}

Expected<std::unique_ptr<Engine>> make_engine(std::string_view spec, const EngineEnvironment& environment) {
  REDUCE_ASSIGN(EngineSpec parsed, parse_engine_spec(spec));
  return make_engine(parsed, environment);
}

EngineSpec settled(const EngineSpec& spec, const EngineEnvironment& environment) {
  EngineSpec out = spec;
  if (out.inner) out.inner = std::make_shared<const EngineSpec>(settled(*out.inner, environment));
  if (const auto settle = kinds::ops(out.kind).settle) settle(out, environment);
  return out;
}

std::string preset_command_line(const EngineSpec& spec, const EngineEnvironment& environment) {
  const EngineSpec& s = spec.innermost();
  const auto& ops = kinds::ops(s.kind);
  return ops.command_line ? ops.command_line(s, environment) : "";
}

}  // namespace reduce
