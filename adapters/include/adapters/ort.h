// The ONNX Runtime engines (specs `ort[@VERSION][:OPTIONS]`, `ort-web[@VERSION][:OPTIONS]`): onnxruntime-node,
// or onnxruntime-web's wasm backend, in persistent Node.js worker processes; one cache folder per release.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace reduce {

// ONNX Runtime's graph optimization levels (SessionOptions.graphOptimizationLevel).
enum class OrtOptimization { Disable, Basic, Extended, All };

// The npm package an engine runs: onnxruntime-node (`ort`), or onnxruntime-web's wasm backend (`ort-web`).
enum class OrtPackage { Node, Web };
std::string_view package_name(OrtPackage package);  // "onnxruntime-node", "onnxruntime-web"

// The release `ort` and `ort-web` run when the spec names none (scripts/ort/install.sh installs it).
inline constexpr std::string_view kOrtDefaultRelease = "1.30.0";

// What `ort[@VERSION]:OPTIONS` sets. Every field is part of the spec; the defaults print as plain `ort`.
struct OrtOptions {
  std::string release;  // `@VERSION`: an npm release (e.g. "1.16.3"); empty: the default installation
  OrtOptimization optimization = OrtOptimization::All;  // `opt=disable|basic|extended|all`
  int threads = 0;          // `threads=N`: intra-op threads (0: the run's --threads, else ONNX Runtime's default)
  std::string provider = "cpu";  // `ep=NAME`: the execution provider, checked against the installed package
};

// Parses the part after "ort:": a comma list of `opt=LEVEL`, `threads=N`, `ep=NAME`. Unknown
// options, levels and providers are one-line errors listing the known ones.
// onnxruntime-web (`package` Web) runs the wasm backend only: `ep=` is refused there, `ep=cpu` too.
Expected<OrtOptions> parse_ort_options(std::string_view options, OrtPackage package = OrtPackage::Node);
// Canonical form: `opt=LEVEL,threads=N,ep=NAME`, each only when it differs from the default.
std::string to_string(const OrtOptions& options);
std::string_view to_string(OrtOptimization level);

// Checks `@VERSION`: MAJOR.MINOR.PATCH with an optional -SUFFIX (letters, digits, '.', '-'), at most
// 64 characters, so that it is safe as a folder name and an npm argument. Errors are one line.
Status check_ort_release(std::string_view release);
// Which of ONNX Runtime's refusals are a limit of the release, not a wrong answer (a format or opset
// newer than it knows, no schema or kernel for an operator and its types, a kernel that says a mode
// is not supported, a type its JavaScript binding cannot pass): the limit in a few words ("IR
// version 10; it reads up to 9", "no kernel for Add(14) with these types"), or empty. Release scans
// call those "cannot take". Plain searches, no regular expression: a message of megabytes is one pass.
std::string ort_limit(std::string_view message);

// Where the release of `package` named by `release` lives: the default folder (below) for plain `ort`
// and for `ort@` the default release; else a folder beside it, `ort-VERSION`, `ort-web`, `ort-web-VERSION`
// (where `scripts/ort/install.sh VERSION` and `install.sh web[@VERSION]` put them).
std::filesystem::path ort_release_folder(OrtPackage package, std::string_view release,
                                         const std::vector<std::string>& env = {},
                                         const std::filesystem::path& cache_folder = {});

// Where onnxruntime-node's default release is installed: REDUCE_ORT_DIR from `env` (the engine's
// extra "NAME=VALUE" entries, e.g. --slot-env), else from this process's environment, else `ort` in
// the cache folder (reduce_cache_folder(cache_folder, env): --cache-dir, REDUCE_CACHE_DIR,
// $XDG_CACHE_HOME/reduce).
std::filesystem::path ort_install_folder(const std::vector<std::string>& env = {},
                                         const std::filesystem::path& cache_folder = {});
// Whether REDUCE_ORT_DIR names the folder: the user's own installation, which reduce never installs
// into (a release missing there is an error saying so, not a download).
bool ort_folder_is_chosen(const std::vector<std::string>& env = {});

// The command that installs a release into `folder` (scripts/ort/install.sh, embedded in the binary
// at build time and run by bash with its arguments as argv: no file of the source tree is needed).
// `word` is install.sh's first argument: VERSION, or web@VERSION.
std::vector<std::string> ort_install_command(const std::string& word, const std::filesystem::path& folder);

}  // namespace reduce
