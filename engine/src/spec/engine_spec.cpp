// make_engine: parses an engine spec and builds the engine it names.
#include "engine/engine_spec.h"

#include "engine/optimized.h"
#include "spec/engine_factories.h"

namespace reduce {

Expected<std::unique_ptr<Engine>> make_engine(std::string_view spec, const EngineEnvironment& environment) {
  const size_t colon = spec.find(':');
  const std::string_view kind = spec.substr(0, colon);
  const bool has_options = colon != std::string_view::npos;
  const std::string_view options = has_options ? spec.substr(colon + 1) : std::string_view{};
  if (kind == "ref") {
    if (has_options) return Error{std::string(spec), "engine 'ref' takes no options"};
    return make_reference_engine(environment.threads);
  }
  if (kind == "opt") {
    OptimizedOptions opt;
    if (has_options) {
      auto parsed = parse_optimized_options(options);
      if (!parsed) return Error{std::string(spec), parsed.error().what};
      opt = std::move(*parsed);
    }
    opt.threads = environment.threads;
    return make_optimized_engine(opt);
  }
  if (kind == "cmd") return make_command_engine(options, environment);
  if (kind == "opencv") {
    if (has_options) return Error{std::string(spec), "engine 'opencv' takes no options"};
    REDUCE_TRY(make_opencv_engine(environment));
    return make_isolated_engine("opencv-inprocess", environment);
  }
  if (kind == "opencv-inprocess") {
    if (has_options) return Error{std::string(spec), "engine 'opencv-inprocess' takes no options"};
    return make_opencv_engine(environment);
  }
  if (kind == "isolated") {
    if (!has_options || options.empty()) return Error{std::string(spec), "'isolated' needs an engine: isolated:SPEC"};
    return make_isolated_engine(options, environment);
  }
  if (kind == "check")
    return Error{std::string(spec), "a check: script decides by itself; it is not an engine that computes outputs"};
  return Error{std::string(spec), "unknown engine (known: ref, opt[:OPTIONS], opencv, opencv-inprocess, cmd:TEMPLATE, isolated:SPEC)"};
}

std::vector<std::pair<std::string, std::string>> engine_spec_help() {
  return {{"ref", "the exact reference interpreter"},
          {"opt[:OPTIONS]",
           "the optimized engine: graph passes and fused kernels; OPTIONS is a comma list of fp32|fp16|bf16, "
           "fault=NAME[+NAME...], no-PASS (docs/engine.md, docs/faults.md)"},
          {"opencv", "OpenCV DNN (CPU), in a worker process so that its crashes become 'crash' errors"},
          {"opencv-inprocess", "OpenCV DNN (CPU) in this process (faster; a crash ends the tool)"},
          {"cmd:TEMPLATE", "a command that runs {model} on {inputs} (input_K.pb) and writes {outputs} (output_K.pb or NAME.npy)"},
          {"isolated:SPEC", "engine SPEC in a worker process: crashes and hangs become errors"}};
}

}  // namespace reduce
