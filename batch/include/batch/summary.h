// OUT/summary.md and OUT/summary.json of `reduce batch`: one row per model, and buckets of
// reproducers with the same failure and the same reduced graph.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "batch/manifest.h"
#include "session/report.h"

namespace reduce {

struct BatchRow {
  BatchItem item;
  std::string status;                 // "reduced", "no failure", "error (exit N)", "interrupted", "not started"
  std::optional<BucketRecord> bucket;  // the bundle's bucket.txt, when it is complete
  bool already_done = false;           // complete before this batch started: skipped
  std::vector<int> lost_ranks;         // MPI: ranks dropped while they held this model (it was tried again)
};

// The bucket.txt of a complete bundle (a bundle without one is incomplete: reduce it again).
std::optional<BucketRecord> read_bucket(const std::filesystem::path& bundle);

// A row per item, before any reduction: already done (skipped) when its bundle under `out` is complete.
std::vector<BatchRow> batch_rows(const std::vector<BatchItem>& items, const std::filesystem::path& out);
// The row of an item reduced now: its status and the bucket its bundle holds; "reduced" without a
// complete bundle is "error (exit 0)".
void finish_batch_row(BatchRow& row, std::string status, const std::filesystem::path& bundle);

// "3 models (1 reduced now, 1 already done, 1 without failure)": rows without a reproducer to trust
// (errors, unconfirmed ones, failures of the engine's setup) count as failed.
std::string batch_count_line(const std::vector<BatchRow>& rows);

// Rows that share a failure and a canonical graph form, in a stable order.
std::vector<std::vector<size_t>> batch_buckets(const std::vector<BatchRow>& rows);

// `ranks_lost`: ranks an MPI job dropped (0 on one host).
std::string batch_summary_markdown(const std::vector<BatchRow>& rows, int ranks_lost);
std::string batch_summary_json(const std::vector<BatchRow>& rows, const std::filesystem::path& out, int ranks_lost);
// OUT/summary.md and OUT/summary.json, each written whole, then renamed into place.
Status write_batch_summary(const std::vector<BatchRow>& rows, const std::filesystem::path& out, int ranks_lost);

}  // namespace reduce
