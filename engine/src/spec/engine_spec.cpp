// EngineSpec: parsing a spec string once, printing it back in canonical form.
#include "engine/engine_spec.h"

namespace reduce {

namespace {

struct KindName {
  EngineKind kind;
  std::string_view name;
};
constexpr KindName kKinds[] = {{EngineKind::Ref, "ref"},       {EngineKind::Opt, "opt"},
                               {EngineKind::OpenCV, "opencv"}, {EngineKind::OpenCVInProcess, "opencv-inprocess"},
                               {EngineKind::Cmd, "cmd"},       {EngineKind::Check, "check"},
                               {EngineKind::Isolated, "isolated"}};

std::string_view kind_name(EngineKind kind) {
  for (const auto& k : kKinds)
    if (k.kind == kind) return k.name;
  return "?";
}

// The spec after `KIND:` (empty without a colon).
Expected<EngineSpec> parse_rest(EngineKind kind, bool has_options, std::string_view rest) {
  EngineSpec spec;
  spec.kind = kind;
  const std::string name(kind_name(kind));
  switch (kind) {
    case EngineKind::Ref:
    case EngineKind::OpenCV:
    case EngineKind::OpenCVInProcess:
      if (has_options) return make_error("engine '" + name + "' takes no options");
      return spec;
    case EngineKind::Opt: {
      REDUCE_ASSIGN(spec.opt, parse_optimized_options(rest));
      return spec;
    }
    case EngineKind::Cmd:
    case EngineKind::Check:
      if (rest.find_first_not_of(" \t") == std::string_view::npos)
        return make_error("'" + name + "' needs a command template: " + name + ":TEMPLATE");
      spec.command = std::string(rest);
      return spec;
    case EngineKind::Isolated: {
      if (rest.empty()) return make_error("'isolated' needs an engine: isolated:SPEC");
      auto inner = parse_engine_spec(rest);
      if (!inner) return make_error(inner.error().what);
      if (inner->kind == EngineKind::Isolated) return make_error("an isolated engine is already isolated");
      if (inner->kind == EngineKind::Check) return make_error("a check: script is not an engine; it cannot be isolated");
      spec.inner = std::make_shared<const EngineSpec>(std::move(*inner));
      return spec;
    }
  }
  return make_error("unknown engine kind");
}

}  // namespace

Expected<EngineSpec> parse_engine_spec(std::string_view text) {
  const size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  const bool has_options = colon != std::string_view::npos;
  for (const auto& k : kKinds) {
    if (k.name != kind) continue;
    auto spec = parse_rest(k.kind, has_options, has_options ? text.substr(colon + 1) : std::string_view{});
    if (!spec) return Error{std::string(text), spec.error().what};
    return spec;
  }
  return Error{std::string(text),
               "unknown engine '" + std::string(kind) +
                   "' (known: ref, opt[:OPTIONS], opencv, opencv-inprocess, cmd:TEMPLATE, check:TEMPLATE, isolated:SPEC)"};
}

std::string to_string(const EngineSpec& spec) {
  const std::string name(kind_name(spec.kind));
  switch (spec.kind) {
    case EngineKind::Opt: {
      const std::string options = to_string(spec.opt);
      return options.empty() ? name : name + ":" + options;
    }
    case EngineKind::Cmd:
    case EngineKind::Check: return name + ":" + spec.command;
    case EngineKind::Isolated: return name + ":" + (spec.inner ? to_string(*spec.inner) : std::string());
    default: return name;
  }
}

bool operator==(const EngineSpec& a, const EngineSpec& b) { return to_string(a) == to_string(b); }

bool EngineSpec::external() const {
  switch (innermost().kind) {
    case EngineKind::Cmd:
    case EngineKind::Check:
    case EngineKind::OpenCV:
    case EngineKind::OpenCVInProcess: return true;
    default: return false;
  }
}

Precision EngineSpec::precision() const {
  const EngineSpec& s = innermost();
  return s.kind == EngineKind::Opt ? s.opt.precision : Precision::FP32;
}

}  // namespace reduce
