// What each engine kind of adapters/engines.def defines in kinds/NAME.cpp: how its spec is parsed,
// printed and turned into an engine, and where it keeps its FP32 nodes.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "adapters/engine_spec.h"
#include "adapters/reproduction.h"

namespace reduce::kinds {

// A spec's text after its kind's name: `NAME[@RELEASE][BRACKET]:REST`.
struct SpecText {
  std::string_view name;                    // the kind's name
  std::optional<std::string_view> release;  // what NAME@... held (only kinds with takes_release get one)
  bool has_options = false;                 // a ':' followed the name (or the bracket)
  std::string_view rest;                    // after that ':'
  std::optional<std::string_view> bracket;  // what NAME[...] held
};

// Each kind names the fields it sets (designated initializers, tested: Recipes.EveryEngineKindNamesItsFields);
// the others keep these defaults.
struct KindOps {
  // The spec (kind set by the caller); errors are one line, without the spec (the caller names it).
  Expected<EngineSpec> (*parse)(const SpecText& text);
  // The options part of the canonical spec, after `NAME` (":fp16", "[fp32=A]:TEMPLATE"; "" for none).
  std::string (*print)(const EngineSpec& spec);
  Expected<std::unique_ptr<Engine>> (*make)(const EngineSpec& spec, const EngineEnvironment& environment);
  // Where the kind keeps the nodes it runs in FP32; null: it takes none (it runs in FP32).
  Fp32Nodes* (*fp32)(EngineSpec& spec) = nullptr;
  // The reduced float precision it computes in (null: FP32).
  Precision (*precision)(const EngineSpec& spec) = nullptr;
  // Whether it runs nodes in FP32 on request (null: no).
  bool (*controls_precision)(const EngineSpec& spec) = nullptr;
  // The command line of a preset for people (null or "": none).
  std::string (*command_line)(const EngineSpec& spec, const EngineEnvironment& environment) = nullptr;
  // Asks the environment, once, what engines made from the spec would otherwise ask at every make
  // (trt: TensorRT's version), and records it in the spec without changing how it prints.
  void (*settle)(EngineSpec& spec, const EngineEnvironment& environment) = nullptr;
  // The scripts that reproduce a failure in the engine's own terms (adapters/reproduction.h); null:
  // a wrapper's inner spec decides, else `reduce check`.
  std::vector<ReproductionFile> (*reproduce)(const EngineSpec& spec, const ReproductionContext& context) = nullptr;
  // Whether the kind takes `NAME@RELEASE` (a release of the engine, installed on demand).
  bool takes_release = false;
};

#define REDUCE_ENGINE(Kind, ...) extern const KindOps Kind;
#include "adapters/engines.def"
#undef REDUCE_ENGINE

const KindOps& ops(EngineKind kind);

// For kinds that take no options at all: `NAME` only.
Expected<EngineSpec> parse_no_options(const SpecText& text);
// For kinds without `NAME[...]`.
Status no_bracket(const SpecText& text);
// ":OPTIONS" for a kind's canonical options ("" when they are all defaults).
inline std::string colon_options(std::string options) { return options.empty() ? options : ":" + options; }

}  // namespace reduce::kinds
