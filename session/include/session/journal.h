// The bundle's journal: one JSON line per committed candidate, so that `reduce --resume` continues
// from the last one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

// What a journal's candidates are candidates of. Node indices and verdicts hold only for the same
// model, engines, verdict options and input sample, so every record carries this and `--resume`
// refuses a journal whose values differ from its own (check_journal_identity). Named values, in this
// order: model (FNV-1a 64 of the model file's bytes: the .onnx or .onnxtxt itself, not its external
// data files, whose names and offsets it holds but not their contents), nodes (top-level nodes of
// the model reduced, after --flatten), engine and reference (the specs as given), tolerance,
// fail_regexes, fail_codes, ignore_fail_codes, repeat, sample (where the input sample reduced on
// came from) and inputs (FNV-1a 64 of its values). Options that change only how the search goes
// (passes, strategy, -j, budgets) are not part of it: a resumed reduction may change them.
struct ReductionIdentity {
  std::vector<std::pair<std::string, std::string>> values;  // name, value
  bool operator==(const ReductionIdentity&) const = default;
};
// The identity of reducing `oracle`'s model (read from `model_file`) on its sample from `sample`.
ReductionIdentity reduction_identity(const std::filesystem::path& model_file, const Oracle& oracle,
                                     const std::string& sample);

// Appends {"candidate": {...}, "nodes": N, "seconds": S, "engine_runs": R, "simplify_runs": K,
// "reduction": {identity}} to DIR/journal (DIR is created when it does not exist yet).
Status append_journal(const std::filesystem::path& dir, const ReductionIdentity& identity, const Candidate& candidate,
                      const JournalStamp& stamp = {});

// The last record of DIR/journal: its candidate, the simplification runs spent by then (0 in
// journals written before they were recorded) and the reduction it belongs to (none in journals
// written before identities were recorded).
struct JournalEntry {
  Candidate candidate;
  size_t simplify_runs = 0;
  std::optional<ReductionIdentity> identity;
};
Expected<JournalEntry> read_journal_entry(const std::filesystem::path& dir);
// The last candidate of DIR/journal.
Expected<Candidate> read_journal(const std::filesystem::path& dir);

// `--resume` from DIR/journal's `entry` as the reduction `now`: refused, in one line naming the
// journal and each value that differs, when it belongs to another reduction or records none.
Status check_journal_identity(const std::filesystem::path& dir, const JournalEntry& entry, const ReductionIdentity& now);

// One candidate as a journal record holds it (a JSON object, numbers that read back exactly), and
// back: also how MPI ranks send candidates (cluster/).
std::string candidate_to_json(const Candidate& candidate);
Expected<Candidate> candidate_from_json(const std::string& text);

}  // namespace reduce
