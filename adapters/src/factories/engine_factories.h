// The engine constructors behind make_engine (private to the engine module).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/engine_spec.h"
#include "adapters/isolated_worker.h"
#include "adapters/trt_preset.h"

namespace reduce {

// `cmd[fp32=...]:TEMPLATE`: runs a command per model run (see docs/engine.md, "External engines").
Expected<std::unique_ptr<Engine>> make_command_engine(std::string_view command_template,
                                                      const EngineEnvironment& environment,
                                                      const Fp32Nodes& fp32_nodes = {});

// What a command engine runs, for presets that build their argv in code (`trt`).
struct CommandSetup {
  std::string name;                 // the spec (Engine::name(), messages)
  std::vector<std::string> tokens;  // argv with placeholders, filled per run
  Fp32Nodes fp32_nodes;             // {fp32_nodes}, {fp32_nodes_file}; and `fp32_arguments` below
  // Arguments for the FP32 nodes present in a prepared model, appended after the filled tokens as
  // they are (node names are model data: never filled). Empty function: none.
  std::function<Expected<std::vector<std::string>>(const std::vector<std::string>& nodes)> fp32_arguments;
};
Expected<std::unique_ptr<Engine>> make_command_engine(CommandSetup setup, const EngineEnvironment& environment);

// PATH as an external command will see it: an entry of the environment's own (--slot-env) wins.
std::string path_variable(const EngineEnvironment& environment);

// The `trt` command in `environment`: the tool on its PATH, TensorRT's version (the settled one, else
// asked of the tool), and the timing cache flags when the environment has a pool.
Expected<TrtCommand> trt_command_in(const TrtOptions& options, const EngineEnvironment& environment);

// `trt[:OPTIONS]`: finds Polygraphy or trtexec on PATH (the environment's, else this process's) and
// makes the command engine that runs it. Errors name what to install.
Expected<std::unique_ptr<Engine>> make_trt_engine(const TrtOptions& options, const EngineEnvironment& environment);

// `opencv`: OpenCV's DNN module in this process; an error when OpenCV was not found at build time.
Expected<std::unique_ptr<Engine>> make_opencv_engine(const EngineEnvironment& environment);

// `ort[@VERSION][:OPTIONS]`, `ort-web[@VERSION][:OPTIONS]`: ONNX Runtime in Node.js worker processes. A named
// release missing from its folder (ort_release_folder()) is installed first; errors: plain `ort` not
// installed, a release that cannot be installed or used here, `node` that cannot start, a provider
// not available.
Expected<std::unique_ptr<Engine>> make_ort_engine(const OrtOptions& options, OrtPackage package,
                                                  const EngineEnvironment& environment);

// `fp16:SPEC`, `bf16:SPEC`: `inner` runs each prepared model converted to `to` at the ONNX level,
// the nodes of `keep` it has left in FP32; values computed in the low type are handed over in FP32.
Expected<std::unique_ptr<Engine>> make_typed_engine(DType to, Fp32Nodes keep, std::unique_ptr<Engine> inner,
                                                    std::string name);

}  // namespace reduce
