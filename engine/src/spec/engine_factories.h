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

}  // namespace reduce
