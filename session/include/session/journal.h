// The bundle's journal: one JSON line per committed candidate, so that `reduce --resume` continues
// from the last one.
#pragma once

#include <filesystem>

#include "oracle/oracle.h"

namespace reduce {

// Appends {"candidate": {...}} to DIR/journal (DIR is created when it does not exist yet).
Status append_journal(const std::filesystem::path& dir, const Candidate& candidate);

// The last candidate of DIR/journal.
Expected<Candidate> read_journal(const std::filesystem::path& dir);

}  // namespace reduce
