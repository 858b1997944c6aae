// The ONNX Runtime engine (spec `ort[:OPTIONS]`): onnxruntime-node in a persistent Node.js worker process.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace reduce {

// ONNX Runtime's graph optimization levels (SessionOptions.graphOptimizationLevel).
enum class OrtOptimization { Disable, Basic, Extended, All };

// What `ort:OPTIONS` sets. Every field is part of the spec; the defaults print as plain `ort`.
struct OrtOptions {
  OrtOptimization optimization = OrtOptimization::All;  // `opt=disable|basic|extended|all`
  int threads = 0;          // `threads=N`: intra-op threads (0: the run's --threads, else ONNX Runtime's default)
  std::string provider = "cpu";  // `ep=NAME`: the execution provider, checked against the installed package
};

// Parses the part after "ort:": a comma list of `opt=LEVEL`, `threads=N`, `ep=NAME`. Unknown
// options, levels and providers are one-line errors listing the known ones.
Expected<OrtOptions> parse_ort_options(std::string_view options);
// Canonical form: `opt=LEVEL,threads=N,ep=NAME`, each only when it differs from the default.
std::string to_string(const OrtOptions& options);
std::string_view to_string(OrtOptimization level);

// Where onnxruntime-node is installed (the folder scripts/ort/install.sh fills): REDUCE_ORT_DIR from
// `env` (the engine's extra "NAME=VALUE" entries, e.g. --slot-env), else from this process's
// environment, else the build-time default (<source>/.cache/ort).
std::filesystem::path ort_install_folder(const std::vector<std::string>& env = {});

}  // namespace reduce
