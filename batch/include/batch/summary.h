// OUT/summary.md and OUT/summary.json of `reduce batch`: one row per model, and buckets of
// reproducers with the same failure and the same reduced graph.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "batch/manifest.h"
#include "report/report.h"

namespace reduce {

struct BatchRow {
  BatchItem item;
  // "reduced", "no failure", "not confirmed (flaky)", "model-independent (...)", "error (exit N)",
  // "interrupted", "not started"
  std::string status;
  std::optional<BucketRecord> bucket;  // the bundle's bucket.txt, when it has one
  bool already_done = false;           // ended before this batch started: skipped
  bool resume = false;                 // interrupted earlier with a journal: continued from it (--resume)
  std::string failure;                 // the failure when there is no bucket (model-independent rows)
  std::vector<int> lost_ranks;         // MPI: ranks dropped while they held this model (it was tried again)
};

// Where batch keeps a row's status in its bundle folder, so that a batch run again knows it.
inline constexpr const char* kBatchStatusName = "batch_status.txt";

// A row per item, before any reduction. Already done (skipped): a complete bundle (neither
// interrupted nor unconfirmed), and, unless `retry`, rows that ended without a reproducer to trust
// (no failure, not confirmed, model-independent), which keep their status. An interrupted row with
// a journal is resumed from it; every other row is reduced again.
std::vector<BatchRow> batch_rows(const std::vector<BatchItem>& items, const std::filesystem::path& out, bool retry = false);
// The row of an item reduced now: its status, the failure the reduction printed (`output`: its
// "failure: " line, for rows without a bundle) and the bucket its bundle holds; "reduced" without
// a complete bundle is "error (exit 0)". The status is kept in the bundle folder (kBatchStatusName).
void finish_batch_row(BatchRow& row, std::string status, const std::filesystem::path& bundle, const std::string& output = {});
// Whether a row ended without a reproducer to trust (an error, unconfirmed, model-independent):
// `reduce batch` then exits 1.
bool batch_row_failed(const BatchRow& row);

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
