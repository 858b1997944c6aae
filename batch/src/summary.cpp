// Rendering the batch summary.
#include "batch/summary.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "core/mapped_file.h"
#include "oracle/verdict_report.h"

namespace reduce {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

// "Mul:1,Add:2" and " Add:2 Mul:1" name the same multiset.
std::string normalized_ops(std::string ops) {
  for (char& c : ops)
    if (c == ',') c = ' ';
  std::vector<std::string> items;
  std::istringstream in(ops);
  for (std::string item; in >> item;) items.push_back(item);
  std::sort(items.begin(), items.end());
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

bool reached_expected(const BatchRow& row) {
  return !row.item.expected_ops.empty() && row.bucket &&
         normalized_ops(row.item.expected_ops) == normalized_ops(row.bucket->ops);
}

// Rows of files that share a name (a/model.onnx, b/model.onnx) are told apart by their bundle folder.
std::string model_cell(const BatchRow& row) {
  const std::string name = row.item.model.filename().string();
  return row.item.folder == row.item.model.stem().string() ? name : name + " (`" + row.item.folder + "/`)";
}

std::string failure_of(const BatchRow& row) { return row.bucket ? row.bucket->failure : row.failure; }

void markdown_row(const BatchRow& row, std::ostream& md) {
  std::string expected = row.item.expected_ops;
  if (!expected.empty()) expected += reached_expected(row) ? " (reached)" : " (NOT reached)";
  const BucketRecord b = row.bucket.value_or(BucketRecord{});
  md << "| " << model_cell(row) << " | `" << row.item.engine << "` | " << row.status << " | "
     << failure_of(row) << " | " << b.original_nodes << " | " << b.reduced_nodes << " | " << b.ops << " | "
     << (row.bucket ? (b.one_minimal ? "true" : "false") : "") << " | " << expected << " | "
     << (row.bucket ? std::to_string(b.checks) : "") << " | " << (row.bucket ? format_number(b.seconds) : "")
     << " |\n";
}

Json result_json(const BatchRow& row, const fs::path& out) {
  const BucketRecord b = row.bucket.value_or(BucketRecord{});
  return {{"model", row.item.model.string()},
          {"engine", row.item.engine},
          {"status", row.status},
          {"lost_ranks", row.lost_ranks},
          {"failure", failure_of(row)},
          {"original_nodes", b.original_nodes},
          {"reduced_nodes", b.reduced_nodes},
          {"op_types", b.ops},
          {"one_minimal", b.one_minimal},
          {"expected_op_types", row.item.expected_ops},
          {"reached_expected", reached_expected(row)},
          {"bundle", (out / row.item.folder).string()}};
}

}  // namespace

std::vector<std::vector<size_t>> batch_buckets(const std::vector<BatchRow>& rows) {
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> buckets;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].status == "reduced" && rows[i].bucket) buckets[{rows[i].bucket->failure, rows[i].bucket->form}].push_back(i);
  std::vector<std::vector<size_t>> out;
  for (auto& [key, members] : buckets) out.push_back(std::move(members));
  return out;
}

std::string batch_summary_markdown(const std::vector<BatchRow>& rows, int ranks_lost) {
  const auto buckets = batch_buckets(rows);
  std::ostringstream md;
  md << "# reduce batch: " << rows.size() << " models, " << buckets.size() << " distinct failures\n\n"
     << "| model | engine | status | failure | nodes | reduced | op types | 1-minimal | expected ops | checks | seconds |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& row : rows) markdown_row(row, md);
  if (ranks_lost > 0) {
    md << "\n" << ranks_lost << " MPI rank" << (ranks_lost > 1 ? "s" : "") << " lost.";
    for (const auto& row : rows)
      for (size_t k = 0; k < row.lost_ranks.size(); ++k)
        md << " Rank " << row.lost_ranks[k] << " was lost while reducing " << row.item.model.filename().string()
           << (k == 0 ? " (tried again on another rank)." : ".");
    md << "\n";
  }
  md << "\n## Buckets\n\n";
  size_t number = 0;
  for (const auto& members : buckets) {
    const BucketRecord& b = *rows[members[0]].bucket;
    md << "### " << ++number << ". " << b.failure << " (" << members.size() << " model" << (members.size() > 1 ? "s" : "")
       << ")\n\nreduced graph: " << b.ops << "\n\n";
    for (size_t i : members)
      md << "- " << rows[i].item.model.filename().string() << " -> `"
         << (fs::path(rows[i].item.folder) / "model.onnx").string() << "`\n";
    md << "\n";
  }
  return md.str();
}

std::string batch_summary_json(const std::vector<BatchRow>& rows, const fs::path& out, int ranks_lost) {
  const auto buckets = batch_buckets(rows);
  Json results = Json::array(), detail = Json::array();
  for (const auto& row : rows) results.push_back(result_json(row, out));
  for (const auto& members : buckets) {
    Json models = Json::array();
    for (size_t i : members) models.push_back(rows[i].item.model.filename().string());
    detail.push_back({{"failure", rows[members[0]].bucket->failure}, {"op_types", rows[members[0]].bucket->ops}, {"models", models}});
  }
  const Json j = {{"models", rows.size()},
                  {"buckets", buckets.size()},
                  {"ranks_lost", ranks_lost},
                  {"results", results},
                  {"buckets_detail", detail}};
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

struct SavedStatus {
  std::string status, failure;
};

std::optional<SavedStatus> read_status(const fs::path& bundle) {
  std::ifstream in(bundle / kBatchStatusName);
  SavedStatus s;
  if (!in || !std::getline(in, s.status) || s.status.empty()) return std::nullopt;
  std::getline(in, s.failure);
  return s;
}

// Answers other than a reproducer: kept when the batch runs again, unless retried.
bool settled_without_reproducer(const std::string& status) {
  return status == "no failure" || starts_with(status, "not confirmed") || starts_with(status, "model-independent");
}

// The last "failure: ..." line a reduction printed.
std::string failure_line(const std::string& output) {
  std::string found;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    if (starts_with(line, "failure: ")) found = line.substr(9);
  return found;
}

}  // namespace

std::vector<BatchRow> batch_rows(const std::vector<BatchItem>& items, const std::filesystem::path& out, bool retry) {
  std::vector<BatchRow> rows;
  for (const auto& item : items) {
    const fs::path bundle = out / item.folder;
    BatchRow row{item, "reduced", read_bucket(bundle), false, false, {}, {}};
    const std::optional<SavedStatus> saved = read_status(bundle);
    std::error_code ec;
    if (saved && !retry && settled_without_reproducer(saved->status)) {
      row.status = saved->status;
      row.failure = saved->failure;
      row.already_done = true;
    } else if (row.bucket && row.bucket->complete && (!saved || saved->status == "reduced")) {
      row.already_done = true;
    } else {
      // Stopped (Ctrl-C, or the batch killed) with a journal: go on from its last reproducer.
      row.resume = fs::exists(bundle / "journal", ec) && (!saved || saved->status == "interrupted");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

void finish_batch_row(BatchRow& row, std::string status, const std::filesystem::path& bundle, const std::string& output) {
  row.status = std::move(status);
  row.bucket = read_bucket(bundle);
  if (row.status == "reduced" && (!row.bucket || !row.bucket->complete)) row.status = "error (exit 0)";
  row.failure = failure_line(output);
  if (row.status == "not started") return;
  // Best effort: without it, the next batch reduces the row again.
  std::error_code ec;
  fs::create_directories(bundle, ec);
  (void)write_file_atomic(bundle / kBatchStatusName, row.status + "\n" + row.failure + "\n");
}

bool batch_row_failed(const BatchRow& row) {
  return starts_with(row.status, "error") || starts_with(row.status, "not confirmed") ||
         starts_with(row.status, "model-independent");
}

std::string batch_count_line(const std::vector<BatchRow>& rows) {
  size_t now = 0, done = 0, passing = 0, errors = 0, interrupted = 0;
  for (const auto& row : rows) {
    if (row.already_done && row.status == "reduced") ++done;
    else if (row.status == "reduced") ++now;
    else if (row.status == "no failure") ++passing;
    else if (batch_row_failed(row)) ++errors;
    else ++interrupted;  // "interrupted", "not started"
  }
  std::ostringstream line;
  line << rows.size() << " models (" << now << " reduced now, " << done << " already done";
  if (passing) line << ", " << passing << " without failure";
  if (errors) line << ", " << errors << " failed";
  if (interrupted) line << ", " << interrupted << " interrupted or not started";
  line << ")";
  return line.str();
}

Status write_batch_summary(const std::vector<BatchRow>& rows, const std::filesystem::path& out, int ranks_lost) {
  REDUCE_TRY(write_file_atomic(out / "summary.md", batch_summary_markdown(rows, ranks_lost)));
  return write_file_atomic(out / "summary.json", batch_summary_json(rows, out, ranks_lost));
}

}  // namespace reduce
