// Process-wide settings of the third-party engine libraries linked in. The executable's commands make
// them once they know --threads; no engine constructor does (it would change every engine of the process).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace reduce {

// "name version" of the engine libraries linked in (OpenCV; empty when none), for `reduce --version`.
std::vector<std::pair<std::string, std::string>> engine_library_versions();

// OpenCV, when built in: its importer's diagnostics silenced (its exceptions carry the same text)
// and its thread pool sized to `threads` (0: OpenCV's default, all cores).
void configure_engine_libraries(int threads);

}  // namespace reduce
