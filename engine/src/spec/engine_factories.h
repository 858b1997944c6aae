// The engine constructors behind make_engine (private to the engine module).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/engine_spec.h"
#include "engine/isolated_worker.h"

namespace reduce {

// `cmd[fp32=...]:TEMPLATE`: runs a command per model run (see docs/engine.md, "External engines").
Expected<std::unique_ptr<Engine>> make_command_engine(std::string_view command_template,
                                                      const EngineEnvironment& environment,
                                                      const Fp32Nodes& fp32_nodes = {});

// `opencv`: OpenCV's DNN module in this process; an error when OpenCV was not found at build time.
Expected<std::unique_ptr<Engine>> make_opencv_engine(const EngineEnvironment& environment);

// `ort[:OPTIONS]`: ONNX Runtime in Node.js worker processes; an error when onnxruntime-node is not
// installed (ort_install_folder()), `node` cannot start, or the provider is not available.
Expected<std::unique_ptr<Engine>> make_ort_engine(const OrtOptions& options, const EngineEnvironment& environment);

}  // namespace reduce
