// OUT/summary.md and OUT/summary.json of `reduce batch`: one row per model, and buckets of
// reproducers with the same failure and the same reduced graph.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "batch_manifest.h"
#include "session/report.h"

namespace reduce::cli {

struct BatchRow {
  BatchItem item;
  std::string status;                 // "reduced", "no failure", "error (exit N)", "interrupted", "not started"
  std::optional<BucketRecord> bucket;  // the bundle's bucket.txt, when it is complete
  bool already_done = false;           // complete before this batch started: skipped
  std::vector<int> lost_ranks;         // MPI: ranks dropped while they held this model (it was tried again)
};

// Rows that share a failure and a canonical graph form, in a stable order.
std::vector<std::vector<size_t>> batch_buckets(const std::vector<BatchRow>& rows);

// `ranks_lost`: ranks an MPI job dropped (0 on one host).
std::string batch_summary_markdown(const std::vector<BatchRow>& rows, int ranks_lost);
std::string batch_summary_json(const std::vector<BatchRow>& rows, const std::filesystem::path& out, int ranks_lost);

}  // namespace reduce::cli
