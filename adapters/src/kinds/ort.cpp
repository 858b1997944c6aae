// `ort[@VERSION][:OPTIONS]` (onnxruntime-node) and `ort-web[@VERSION][:OPTIONS]` (onnxruntime-web's wasm
// backend under Node.js): ONNX Runtime in persistent Node.js workers, one pool per release.
#include "reproduction/scripts.h"
#include "kinds/engine_kinds.h"
#include "factories/engine_factories.h"

namespace reduce::kinds {

namespace {

// The options and the release of either kind; ort-web has no execution providers to choose.
Expected<EngineSpec> parse_release_options(const SpecText& text, OrtPackage package) {
  REDUCE_TRY(no_bracket(text));
  EngineSpec spec;
  REDUCE_ASSIGN(spec.ort, parse_ort_options(text.rest, package));
  if (text.release) {
    REDUCE_TRY(check_ort_release(*text.release));
    spec.ort.release = std::string(*text.release);
  }
  return spec;
}

std::string print_release_options(const EngineSpec& spec) {
  return (spec.ort.release.empty() ? "" : "@" + spec.ort.release) + colon_options(to_string(spec.ort));
}

}  // namespace

const KindOps Ort = {
    .parse = [](const SpecText& text) { return parse_release_options(text, OrtPackage::Node); },
    .print = print_release_options,
    .make = [](const EngineSpec& spec, const EngineEnvironment& environment) -> Expected<std::unique_ptr<Engine>> {
      return make_ort_engine(spec.ort, OrtPackage::Node, environment);
    },
    .reproduce = [](const EngineSpec& spec, const ReproductionContext& context) {
      auto files = repro::ort_python(spec, context);
      for (auto& f : repro::ort_node(spec, context)) files.push_back(std::move(f));
      return files;
    },
    .takes_release = true,
};

const KindOps OrtWeb = {
    .parse = [](const SpecText& text) { return parse_release_options(text, OrtPackage::Web); },
    .print = print_release_options,
    .make = [](const EngineSpec& spec, const EngineEnvironment& environment) -> Expected<std::unique_ptr<Engine>> {
      return make_ort_engine(spec.ort, OrtPackage::Web, environment);
    },
    .reproduce = [](const EngineSpec& spec, const ReproductionContext& context) { return repro::ort_node(spec, context); },
    .takes_release = true,
};

}  // namespace reduce::kinds
