// EngineSpec: parsing a spec string once, printing it back in canonical form.
#include "engine/engine_spec.h"

#include <optional>

namespace reduce {

namespace {

struct KindName {
  EngineKind kind;
  std::string_view name;
};
constexpr KindName kKinds[] = {{EngineKind::Ref, "ref"},       {EngineKind::Opt, "opt"},
                               {EngineKind::OpenCV, "opencv"}, {EngineKind::OpenCVInProcess, "opencv-inprocess"},
                               {EngineKind::Trt, "trt"},       {EngineKind::Cmd, "cmd"},       {EngineKind::Check, "check"},
                               {EngineKind::Isolated, "isolated"}, {EngineKind::Ort, "ort"}};

std::string_view kind_name(EngineKind kind) {
  for (const auto& k : kKinds)
    if (k.kind == kind) return k.name;
  return "?";
}

// The spec after `KIND:` (empty without a colon); `bracket` is what `KIND[...]` held.
Expected<EngineSpec> parse_rest(EngineKind kind, bool has_options, std::string_view rest,
                                std::optional<std::string_view> bracket) {
  EngineSpec spec;
  spec.kind = kind;
  const std::string name(kind_name(kind));
  if (bracket) {
    if (kind != EngineKind::Cmd && kind != EngineKind::Check)
      return make_error("only cmd[...] and check[...] take bracketed options (opt: opt:fp16,fp32=NODE+NODE)");
    if (bracket->substr(0, 5) != "fp32=")
      return make_error("unknown option '" + std::string(*bracket) + "' in " + name + "[...] (known: fp32=NODE+NODE|@FILE)");
    REDUCE_ASSIGN(spec.fp32_nodes, parse_fp32_nodes(bracket->substr(5)));
  }
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
    case EngineKind::Trt:
      if (has_options) {
        REDUCE_ASSIGN(spec.trt, parse_trt_options(rest));
      }
      return spec;
    case EngineKind::Ort: {
      REDUCE_ASSIGN(spec.ort, parse_ort_options(rest));
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
      if (inner->kind == EngineKind::Ort) return make_error("'ort' runs in a worker process already; use it without isolated:");
      spec.inner = std::make_shared<const EngineSpec>(std::move(*inner));
      return spec;
    }
  }
  return make_error("unknown engine kind");
}

}  // namespace

Expected<EngineSpec> parse_engine_spec(std::string_view text) {
  size_t colon = text.find(':');
  std::string_view kind = text.substr(0, colon);
  // `KIND[OPTIONS]:REST` (cmd and check: their REST is a template with no room for options).
  std::optional<std::string_view> bracket;
  if (const size_t open = kind.find('['); open != std::string_view::npos) {
    const size_t close = text.find(']', open);
    if (close == std::string_view::npos || (close + 1 < text.size() && text[close + 1] != ':'))
      return Error{std::string(text), "expected KIND[OPTIONS]:REST"};
    bracket = text.substr(open + 1, close - open - 1);
    kind = text.substr(0, open);
    colon = close + 1 < text.size() ? close + 1 : std::string_view::npos;
  }
  const bool has_options = colon != std::string_view::npos;
  for (const auto& k : kKinds) {
    if (k.name != kind) continue;
    auto spec = parse_rest(k.kind, has_options, has_options ? text.substr(colon + 1) : std::string_view{}, bracket);
    // A file named by fp32=@FILE is the subject of its own errors.
    if (!spec) return Error{spec.error().where.empty() ? std::string(text) : spec.error().where, spec.error().what};
    return spec;
  }
  return Error{std::string(text),
               "unknown engine '" + std::string(kind) +
                   "' (known: ref, opt[:OPTIONS], opencv, opencv-inprocess, trt[:OPTIONS], ort[:OPTIONS], cmd:TEMPLATE, check:TEMPLATE, "
                   "isolated:SPEC)"};
}

std::string to_string(const EngineSpec& spec) {
  const std::string name(kind_name(spec.kind));
  switch (spec.kind) {
    case EngineKind::Opt: {
      const std::string options = to_string(spec.opt);
      return options.empty() ? name : name + ":" + options;
    }
    case EngineKind::Trt: {
      const std::string options = to_string(spec.trt);
      return options.empty() ? name : name + ":" + options;
    }
    case EngineKind::Ort: {
      const std::string options = to_string(spec.ort);
      return options.empty() ? name : name + ":" + options;
    }
    case EngineKind::Cmd:
    case EngineKind::Check:
      return name + (spec.fp32_nodes.empty() ? "" : "[fp32=" + to_string(spec.fp32_nodes) + "]") + ":" + spec.command;
    case EngineKind::Isolated: return name + ":" + (spec.inner ? to_string(*spec.inner) : std::string());
    default: return name;
  }
}

bool operator==(const EngineSpec& a, const EngineSpec& b) { return to_string(a) == to_string(b); }

bool EngineSpec::external() const {
  switch (innermost().kind) {
    case EngineKind::Trt:
    case EngineKind::Cmd:
    case EngineKind::Check:
    case EngineKind::OpenCV:
    case EngineKind::OpenCVInProcess:
    case EngineKind::Ort: return true;
    default: return false;
  }
}

Precision EngineSpec::precision() const {
  const EngineSpec& s = innermost();
  if (s.kind == EngineKind::Trt) return s.trt.bf16 ? Precision::BF16 : s.trt.fp16 ? Precision::FP16 : Precision::FP32;
  return s.kind == EngineKind::Opt ? s.opt.precision : Precision::FP32;
}

const Fp32Nodes& EngineSpec::fp32() const {
  const EngineSpec& s = innermost();
  if (s.kind == EngineKind::Trt) return s.trt.fp32_nodes;
  return s.kind == EngineKind::Opt ? s.opt.fp32_nodes : s.fp32_nodes;
}

bool EngineSpec::controls_precision() const {
  const EngineSpec& s = innermost();
  if (s.kind == EngineKind::Opt) return s.opt.precision != Precision::FP32;
  if (s.kind == EngineKind::Trt) return s.trt.reduced_precision();
  if (s.kind != EngineKind::Cmd && s.kind != EngineKind::Check) return false;
  return s.command.find("{fp32_nodes}") != std::string::npos || s.command.find("{fp32_nodes_file}") != std::string::npos;
}

Expected<EngineSpec> with_fp32_nodes(const EngineSpec& spec, Fp32Nodes nodes) {
  EngineSpec out = spec;
  switch (spec.kind) {
    case EngineKind::Opt: out.opt.fp32_nodes = std::move(nodes); return out;
    case EngineKind::Trt: out.trt.fp32_nodes = std::move(nodes); return out;
    case EngineKind::Cmd:
    case EngineKind::Check: out.fp32_nodes = std::move(nodes); return out;
    case EngineKind::Isolated: {
      REDUCE_ASSIGN(EngineSpec inner, with_fp32_nodes(*spec.inner, std::move(nodes)));
      out.inner = std::make_shared<const EngineSpec>(std::move(inner));
      return out;
    }
    default:
      return Error{to_string(spec), "runs every node in FP32 already; only opt, trt, cmd: and check: take fp32 nodes"};
  }
}

}  // namespace reduce
