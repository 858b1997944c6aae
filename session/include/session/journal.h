// The bundle's journal: one JSON line per committed candidate, so that `reduce --resume` continues
// from the last one.
#pragma once

#include <filesystem>
#include <string>

#include "oracle/oracle.h"

namespace reduce {

// When a candidate was committed: its size, the seconds since the session started and the engine
// runs so far (what "time to a first small reproducer" is read from), and the engine runs the
// simplification passes had spent (ReduceOptions::simplify_runs: --resume goes on from them).
struct JournalStamp {
  size_t nodes = 0;
  double seconds = 0;
  uint64_t engine_runs = 0;
  size_t simplify_runs = 0;
};

// Appends {"candidate": {...}, "nodes": N, "seconds": S, "engine_runs": R, "simplify_runs": K} to
// DIR/journal (DIR is created when it does not exist yet).
Status append_journal(const std::filesystem::path& dir, const Candidate& candidate, const JournalStamp& stamp = {});

// The last record of DIR/journal: its candidate and the simplification runs spent by then (0 in
// journals written before they were recorded).
struct JournalEntry {
  Candidate candidate;
  size_t simplify_runs = 0;
};
Expected<JournalEntry> read_journal_entry(const std::filesystem::path& dir);
// The last candidate of DIR/journal.
Expected<Candidate> read_journal(const std::filesystem::path& dir);

// One candidate as a journal record holds it (a JSON object, numbers that read back exactly), and
// back: also how MPI ranks send candidates (cluster/).
std::string candidate_to_json(const Candidate& candidate);
Expected<Candidate> candidate_from_json(const std::string& text);

}  // namespace reduce
