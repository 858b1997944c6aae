// Process-wide settings of the third-party engine libraries linked in. The executable's commands make
// them once they know --threads; no engine constructor does (it would change every engine of the process).
#pragma once

namespace reduce {

// OpenCV, when built in: its importer's diagnostics silenced (its exceptions carry the same text)
// and its thread pool sized to `threads` (0: OpenCV's default, all cores).
void configure_engine_libraries(int threads);

}  // namespace reduce
