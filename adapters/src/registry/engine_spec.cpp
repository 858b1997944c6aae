// EngineSpec: parsing a spec string once, printing it back in canonical form, and what engines.def
// says of each kind. What is particular to a kind lives in kinds/NAME.cpp.
#include "adapters/engine_spec.h"

#include <cctype>
#include <iostream>
#include <optional>
#include <utility>
#include <vector>

#include "core/spelling.h"
#include "kinds/engine_kinds.h"

namespace reduce {

namespace {

constexpr EngineKindTraits kTraits[] = {
#define REDUCE_ENGINE(Kind, name, in_process, external, gives_values, usage, help) \
  {EngineKind::Kind, name, in_process, external, gives_values, usage, help},
#include "adapters/engines.def"
#undef REDUCE_ENGINE
};

}  // namespace

std::string engine_kinds_usage(std::string_view separator) {
  std::string known;
  for (const auto& t : kTraits) known += (known.empty() ? "" : std::string(separator)) + std::string(t.usage);
  return known;
}

namespace kinds {

const KindOps& ops(EngineKind kind) {
  static constexpr const KindOps* kOps[] = {
#define REDUCE_ENGINE(Kind, ...) &Kind,
#include "adapters/engines.def"
#undef REDUCE_ENGINE
  };
  return *kOps[static_cast<size_t>(kind)];
}

Status no_bracket(const SpecText& text) {
  if (text.bracket) return make_error("only cmd[...] and check[...] take bracketed options (opt: opt:fp16,fp32=NODE+NODE)");
  return {};
}

Expected<EngineSpec> parse_no_options(const SpecText& text) {
  REDUCE_TRY(no_bracket(text));
  if (text.has_options) return make_error("engine '" + std::string(text.name) + "' takes no options");
  return EngineSpec{};
}

}  // namespace kinds

const EngineKindTraits& engine_kind_traits(EngineKind kind) { return kTraits[static_cast<size_t>(kind)]; }

std::span<const EngineKindTraits> engine_kinds() { return kTraits; }

namespace {

// " (did you mean 'ort'?)": the nearest kind, or the kind another tool's name for the engine means.
std::string engine_suggestion(std::string_view kind) {
  static constexpr std::pair<std::string_view, std::string_view> kOtherNames[] = {
      {"onnxruntime", "ort"}, {"onnxrt", "ort"}, {"onnxruntime-node", "ort"}, {"onnxruntime-web", "ort-web"},
      {"tensorrt", "trt"},    {"trtexec", "trt"}, {"polygraphy", "trt"},       {"cv", "opencv"},
      {"opencv-dnn", "opencv"}, {"dnn", "opencv"}, {"reference", "ref"},       {"optimized", "opt"}};
  std::string lowered(kind);
  for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [other, ours] : kOtherNames)
    if (lowered == other) return " (did you mean '" + std::string(ours) + "'?)";
  std::vector<std::string> known;
  for (const auto& t : kTraits) known.emplace_back(t.name);
  return did_you_mean(kind, known);
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
  // `KIND@RELEASE`: a release of the engine (ort@1.16.3).
  std::optional<std::string_view> release;
  if (const size_t at = kind.find('@'); at != std::string_view::npos) {
    release = kind.substr(at + 1);
    kind = kind.substr(0, at);
  }
  for (const auto& t : kTraits) {
    if (t.name != kind) continue;
    if (release && !kinds::ops(t.kind).takes_release)
      return Error{std::string(text), "engine '" + std::string(kind) + "' has no releases to choose (only ort@VERSION and ort-web@VERSION)"};
    const kinds::SpecText rest{t.name, release, has_options, has_options ? text.substr(colon + 1) : std::string_view{}, bracket};
    auto spec = kinds::ops(t.kind).parse(rest);
    // A file named by fp32=@FILE is the subject of its own errors.
    if (!spec) return Error{spec.error().where.empty() ? std::string(text) : spec.error().where, spec.error().what};
    spec->kind = t.kind;
    return spec;
  }
  return Error{std::string(text), "unknown engine '" + std::string(kind) + "'" + engine_suggestion(kind) +
                                     " (known: " + engine_kinds_usage() + ")"};
}

namespace {

// Whether `piece` starts a spec of a kind that takes releases: `ort`, `ort@...`, `ort-web:...`, `ort,...`.
bool starts_release_spec(std::string_view piece) {
  for (const auto& t : kTraits) {
    if (!kinds::ops(t.kind).takes_release || piece.substr(0, t.name.size()) != t.name) continue;
    if (piece.size() == t.name.size()) return true;
    if (const char next = piece[t.name.size()]; next == '@' || next == ':' || next == ',') return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> split_release_list(std::string_view text) {
  std::vector<std::string> specs;
  if (!starts_release_spec(text)) return {std::string(text)};
  for (size_t start = 0;;) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view piece = text.substr(start, comma - start);
    const std::string last = specs.empty() ? std::string() : specs.back();
    const bool bare = !piece.empty() && piece[0] >= '0' && piece[0] <= '9' && !last.empty() &&
                      last.find(':') == std::string::npos;
    if (specs.empty() || starts_release_spec(piece)) specs.emplace_back(piece);
    else if (bare) specs.push_back(last.substr(0, last.find('@')) + "@" + std::string(piece));
    else specs.back() += "," + std::string(piece);
    if (comma == text.size()) return specs;
    start = comma + 1;
  }
}

std::string to_string(const EngineSpec& spec) {
  return std::string(spec.traits().name) + kinds::ops(spec.kind).print(spec);
}

bool operator==(const EngineSpec& a, const EngineSpec& b) { return to_string(a) == to_string(b); }

bool EngineSpec::external() const { return innermost().traits().external; }

const EngineSpec& EngineSpec::precision_owner() const {
  if (kinds::ops(kind).fp32 || !inner) return *this;
  return inner->precision_owner();
}

namespace {

// A wrapper that owns the precision (fp16:SPEC, bf16:SPEC) converts the model at the ONNX level.
bool converts_models(const EngineSpec& spec) {
  const EngineSpec& owner = spec.precision_owner();
  return owner.inner && owner.precision() != Precision::FP32;
}

}  // namespace

const EngineSpec& EngineSpec::typed_model_runner() const {
  const EngineSpec* runner = this;
  while (runner->inner && (runner->kind == EngineKind::Isolated || converts_models(*runner))) runner = runner->inner.get();
  return *runner;
}

Precision EngineSpec::precision() const {
  const EngineSpec& s = precision_owner();
  const auto& ops = kinds::ops(s.kind);
  return ops.precision ? ops.precision(s) : Precision::FP32;
}

const Fp32Nodes& EngineSpec::fp32() const {
  static const Fp32Nodes kNone;
  const EngineSpec& s = precision_owner();
  const auto& ops = kinds::ops(s.kind);
  // The accessor only points into the spec; nothing is changed through it.
  return ops.fp32 ? *ops.fp32(const_cast<EngineSpec&>(s)) : kNone;
}

bool EngineSpec::controls_precision() const {
  const EngineSpec& s = precision_owner();
  const auto& ops = kinds::ops(s.kind);
  return ops.controls_precision && ops.controls_precision(s);
}

Expected<EngineSpec> with_fp32_nodes(const EngineSpec& spec, Fp32Nodes nodes) {
  EngineSpec out = spec;
  if (spec.inner && !kinds::ops(spec.kind).fp32) {  // isolated: the set is its inner spec's
    REDUCE_ASSIGN(EngineSpec inner, with_fp32_nodes(*spec.inner, std::move(nodes)));
    out.inner = std::make_shared<const EngineSpec>(std::move(inner));
    return out;
  }
  const auto& ops = kinds::ops(spec.kind);
  if (!ops.fp32) return Error{to_string(spec), "runs every node in FP32 already; only opt, trt, cmd:, check:, fp16: and bf16: take fp32 nodes"};
  *ops.fp32(out) = std::move(nodes);
  return out;
}

std::vector<std::pair<std::string, std::string>> engine_spec_help() {
  std::vector<std::pair<std::string, std::string>> help;
  for (const auto& t : kTraits) help.emplace_back(t.usage, t.help);
  return help;
}

void EngineEnvironment::note(const std::string& text) const {
  if (on_note) on_note(text);
  else std::cerr << "note: " + text + "\n";
}

}  // namespace reduce
