// Engine specs: the strings that name an engine everywhere (`ref`, `opt:fp16,fault=...`, `opencv`,
// `cmd:TEMPLATE`), and the one factory that turns a spec into an Engine.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"

namespace reduce {

// What the environment gives engines that run outside this process (`cmd:`), or in a worker.
struct EngineEnvironment {
  // Per-run limit in seconds for external runs (0: none). A run over it ends with ErrorKind::Timeout.
  double timeout_seconds = 0;
  // Extra environment variables for external runs ("NAME=VALUE"), e.g. a device pinned per slot.
  std::vector<std::string> env;
  // Threads an in-process engine may use for one run (0: all cores).
  int threads = 0;
  // The program that serves isolated engines (`isolated:SPEC`, `opencv`) as `PROGRAM __worker FD`:
  // the `reduce` executable. Empty: this process's own executable (/proc/self/exe).
  std::filesystem::path worker_program;
};

// Builds the engine a spec names. Errors (one line) name the spec and the problem: unknown engine,
// unknown option, engine not built in (e.g. `opencv` without OpenCV).
Expected<std::unique_ptr<Engine>> make_engine(std::string_view spec, const EngineEnvironment& environment = {});

// The engine kinds `make_engine` knows, with a one-line description each (for --help texts).
std::vector<std::pair<std::string, std::string>> engine_spec_help();

}  // namespace reduce
