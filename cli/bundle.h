// The reproducer bundle: model.onnx, inputs/, expected/, actual/, report.json, report.md, journal
// and graph.svg — everything a bug report needs, written so that a half-written bundle never
// looks complete.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "oracle/oracle.h"

namespace reduce::cli {

// What the reduction did, for the reports.
struct ReductionFacts {
  std::string model_path;
  std::string command_line;  // the exact command to reproduce (shell-quoted)
  std::string strategy;
  size_t original_nodes = 0;
  uint64_t checks = 0;
  uint64_t cache_hits = 0;
  uint64_t slipped = 0;
  uint64_t invalid = 0;
  double seconds = 0;
  bool one_minimal = false;
  bool stopped = false;  // interrupted (Ctrl-C): the best reproducer so far
  int jobs = 1;
  struct PassFacts {
    std::string name;
    uint64_t checks = 0;
    uint64_t successes = 0;
    double seconds = 0;
  };
  std::vector<PassFacts> passes;
};

// Op type -> count, without Constant nodes.
std::map<std::string, size_t> op_type_counts(const Graph& graph);

// Writes the reduced model and its inputs (the "best so far" part), atomically per file.
Status write_bundle_model(const std::filesystem::path& dir, const CandidateRun& run);

// Writes the whole bundle for `candidate`: runs it once more on the engine for `actual/`.
Status write_bundle(const std::filesystem::path& dir, Oracle& oracle, const Candidate& candidate,
                    const ReductionFacts& facts);

// Appends one committed candidate to DIR/journal, and reads the last one back (for --resume).
Status append_journal(const std::filesystem::path& dir, const Candidate& candidate);
Expected<Candidate> read_journal(const std::filesystem::path& dir);

}  // namespace reduce::cli
