// `trt[:OPTIONS]`: TensorRT through Polygraphy or trtexec, a command per run.
#include "reproduction/scripts.h"
#include "kinds/engine_kinds.h"
#include "factories/engine_factories.h"

namespace reduce::kinds {

const KindOps Trt = {
    .parse = [](const SpecText& text) -> Expected<EngineSpec> {
      REDUCE_TRY(no_bracket(text));
      EngineSpec spec;
      if (text.has_options) {
        REDUCE_ASSIGN(spec.trt, parse_trt_options(text.rest));
      }
      return spec;
    },
    .print = [](const EngineSpec& spec) { return colon_options(to_string(spec.trt)); },
    .make = [](const EngineSpec& spec, const EngineEnvironment& environment) -> Expected<std::unique_ptr<Engine>> { return make_trt_engine(spec.trt, environment); },
    .fp32 = [](EngineSpec& spec) { return &spec.trt.fp32_nodes; },
    .precision = [](const EngineSpec& spec) {
      return spec.trt.bf16 ? Precision::BF16 : spec.trt.fp16 ? Precision::FP16 : Precision::FP32;
    },
    .controls_precision = [](const EngineSpec& spec) { return spec.trt.reduced_precision(); },
    .command_line = [](const EngineSpec& spec, const EngineEnvironment& environment) -> std::string {
      auto command = trt_command_in(spec.trt, environment);
      if (!command) return "";
      std::vector<std::string> argv = command->argv;
      if (command->version < 11)
        if (auto fp32 = trt_fp32_arguments(command->tool, spec.trt.fp32_nodes.names)) argv.insert(argv.end(), fp32->begin(), fp32->end());
      const std::string line = shell_command_line(argv);
      if (command->version < 11 || !spec.trt.reduced_precision()) return line;
      return line + "  (TensorRT " + std::to_string(command->version) + ": on the model converted to " +
             (spec.trt.bf16 ? "BF16" : "FP16") + " at the ONNX level" +
             (spec.trt.fp32_nodes.empty() ? std::string() : ", the fp32= nodes kept in FP32") + ")";
    },
    .settle = [](EngineSpec& spec, const EngineEnvironment& environment) {
      if (spec.trt.version || spec.trt.detected_version) return;
      // A tool that cannot be found, or an option it refuses, is said when an engine is made.
      if (auto command = trt_command_in(spec.trt, environment)) spec.trt.detected_version = command->version;
    },
    .reproduce = repro::trt_scripts,
};

}  // namespace reduce::kinds
