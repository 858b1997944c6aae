// make_engine: builds the engine a parsed spec names.
#include "engine/engine_spec.h"
#include "engine/optimized.h"
#include "spec/engine_factories.h"

namespace reduce {

Expected<std::unique_ptr<Engine>> make_engine(const EngineSpec& spec, const EngineEnvironment& environment) {
  switch (spec.kind) {
    case EngineKind::Ref: return make_reference_engine(environment.threads, environment.limits());
    case EngineKind::Opt: {
      OptimizedOptions opt = spec.opt;
      opt.threads = environment.threads;
      opt.limits = environment.limits();
      return make_optimized_engine(opt);
    }
    case EngineKind::Trt: return make_trt_engine(spec.trt, environment);
    case EngineKind::Cmd: return make_command_engine(spec.command, environment, spec.fp32_nodes);
    case EngineKind::OpenCV:
      REDUCE_TRY(make_opencv_engine(environment));
      return make_isolated_engine("opencv-inprocess", environment);
    case EngineKind::OpenCVInProcess: return make_opencv_engine(environment);
    case EngineKind::Isolated: return make_isolated_engine(to_string(*spec.inner), environment);
    case EngineKind::Ort: return make_ort_engine(spec.ort, environment);
    case EngineKind::Check:
      return Error{to_string(spec), "a check: script decides by itself; it is not an engine that computes outputs"};
  }
  return Error{to_string(spec), "unknown engine kind"};
}

Expected<std::unique_ptr<Engine>> make_engine(std::string_view spec, const EngineEnvironment& environment) {
  REDUCE_ASSIGN(EngineSpec parsed, parse_engine_spec(spec));
  return make_engine(parsed, environment);
}

std::string preset_command_line(const EngineSpec& spec, const EngineEnvironment& environment) {
  const EngineSpec& s = spec.innermost();
  if (s.kind != EngineKind::Trt) return "";
  auto command = trt_command(s.trt, path_variable(environment));
  if (!command) return "";
  std::vector<std::string> argv = command->argv;
  if (auto fp32 = trt_fp32_arguments(command->tool, s.trt.fp32_nodes.names)) argv.insert(argv.end(), fp32->begin(), fp32->end());
  return shell_command_line(argv);
}

std::vector<std::pair<std::string, std::string>> engine_spec_help() {
  return {{"ref", "the exact reference interpreter"},
          {"opt[:OPTIONS]",
           "the optimized engine: graph passes and fused kernels; OPTIONS is a comma list of fp32|fp16|bf16, "
           "fp32=NODE+NODE|@FILE (nodes kept in FP32), fault=NAME[+NAME...], no-PASS (docs/engine.md, docs/faults.md)"},
          {"opencv", "OpenCV DNN (CPU), in a worker process so that its crashes become 'crash' errors"},
          {"opencv-inprocess", "OpenCV DNN (CPU) in this process (faster; a crash ends the tool)"},
          {"trt[:OPTIONS]",
           "TensorRT through Polygraphy (`polygraphy run --trt`) or trtexec, whichever is on PATH; OPTIONS is a comma list "
           "of fp16, bf16, int8, tf32, fp32=NODE+NODE|@FILE (layers kept in FP32), tool=polygraphy|trtexec (docs/tensorrt.md)"},
          {"ort[:OPTIONS]",
           "ONNX Runtime 1.30 (onnxruntime-node, scripts/ort/install.sh) in a persistent Node.js worker; OPTIONS is a "
           "comma list of opt=disable|basic|extended|all (default all), threads=N, ep=cpu (docs/onnxruntime.md)"},
          {"cmd:TEMPLATE", "a command that runs {model} on {inputs} (input_K.pb) and writes {outputs} (output_K.pb or NAME.npy)"},
          {"cmd[fp32=NODE+NODE|@FILE]:TEMPLATE",
           "the same, with nodes to keep in FP32 given to the command as {fp32_nodes} (comma-separated) and "
           "{fp32_nodes_file} (one per line)"},
          {"isolated:SPEC", "engine SPEC in a worker process: crashes and hangs become errors"}};
}

}  // namespace reduce
