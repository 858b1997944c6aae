// Parsing, printing and making the typed wrappers `fp16:SPEC` and `bf16:SPEC`.
#include "kinds/typed_kinds.h"

#include "factories/engine_factories.h"

namespace reduce::kinds {

Expected<EngineSpec> parse_typed(const SpecText& text) {
  const std::string name(text.name);
  EngineSpec spec;
  if (text.bracket) {
    if (text.bracket->substr(0, 5) != "fp32=")
      return make_error("unknown option '" + std::string(*text.bracket) + "' in " + name + "[...] (known: fp32=NODE+NODE|@FILE)");
    REDUCE_ASSIGN(spec.fp32_nodes, parse_fp32_nodes(text.bracket->substr(5)));
  }
  if (text.rest.empty()) return make_error("'" + name + "' needs an engine: " + name + ":SPEC (e.g. " + name + ":ref)");
  auto inner = parse_engine_spec(text.rest);
  if (!inner) return make_error(inner.error().what);
  if (!inner->gives_values()) return make_error("a check: script cannot run a converted model yet; use " + name + ":cmd:...");
  if (inner->precision() != Precision::FP32 || !inner->fp32().empty())
    return make_error("'" + name + ":' converts the model itself; its engine must compute as typed (" + to_string(*inner) +
                      " sets a precision of its own)");
  spec.inner = std::make_shared<const EngineSpec>(std::move(*inner));
  return spec;
}

std::string print_typed(const EngineSpec& spec) {
  return (spec.fp32_nodes.empty() ? "" : "[fp32=" + to_string(spec.fp32_nodes) + "]") + ":" +
         (spec.inner ? to_string(*spec.inner) : std::string());
}

Expected<std::unique_ptr<Engine>> make_typed(const EngineSpec& spec, const EngineEnvironment& environment,
                                             Precision precision) {
  REDUCE_ASSIGN(auto inner, make_engine(*spec.inner, environment));
  return make_typed_engine(precision == Precision::BF16 ? DType::BFloat16 : DType::Float16, spec.fp32_nodes,
                           std::move(inner), to_string(spec));
}

}  // namespace reduce::kinds
