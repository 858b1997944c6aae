// reduce's own release, and the releases of the libraries core was built with (`reduce --version`,
// report.json, the engine release of reduce's own engines).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace reduce {

// Bumped by hand with each change a user can see in the CLI contract (README, docs/reference.md).
inline constexpr const char* kReduceVersion = "0.9.1";

// "name version" pairs of the libraries core is built with (protobuf, ONNX).
std::vector<std::pair<std::string, std::string>> core_library_versions();

}  // namespace reduce
