// `reduce batch DIR --engine ort@A,ort@B,...`: a release scan over many models. One row per model
// (its verdict on each release, its class, the reductions its changes asked for), kept in
// OUT/releases/NAME.json as each row ends so that an interrupted scan resumes, and OUT/summary.md and
// OUT/summary.json with a table of the classes and their counts at the top.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "batch/manifest.h"
#include "batch/summary.h"
#include "core/status.h"
#include "oracle/release_scan.h"

namespace reduce {

// The reduction a change of behaviour asked for, and how it ended.
struct ReleaseReduction {
  ReleaseChange change;
  std::string command;  // as the user would run it (`reduce MODEL --engine ... -o OUT/FOLDER`)
  BatchItem item;       // what batch reduces: the failing release, its reference, the data set, the folder
  std::string status = "not started";  // the batch row's status ("reduced", "no failure", ...)
  std::optional<BucketRecord> bucket;
};

struct ReleaseRow {
  BatchItem item;  // the model (its engine: the release list), its data set and its folder name
  std::vector<ReleaseVerdict> scan;
  std::string error;  // the model could not be checked at all (it does not load): the row's one line
  std::vector<ReleaseReduction> reductions;

  // scan_class(scan), or "error".
  std::string row_class() const { return error.empty() ? scan_class(scan) : "error"; }
};

// Where a row is kept (OUT/releases/NAME.json), and the row read back from there: nullopt when the
// file is missing, unreadable or for another model or list of releases (then it is scanned again).
std::filesystem::path release_row_file(const std::filesystem::path& out, const BatchItem& item);
std::optional<ReleaseRow> read_release_row(const std::filesystem::path& out, const BatchItem& item,
                                           const std::vector<std::string>& specs);
// Writes the row's file whole, then renames it into place.
Status write_release_row(const std::filesystem::path& out, const ReleaseRow& row);

// The reductions a scanned row asks for: one per change of behaviour (fixed, regressed, failure
// changed), each on its failing release against its passing one, into OUT/NAME (OUT/NAME.SPEC when
// there are several). `options`: the options of the row's checks as shell words, its data set's
// --inputs and --expected included (for the printed command; batch passes them as they are).
void plan_release_reductions(ReleaseRow& row, const std::filesystem::path& out, const std::string& options);

// "1884 models: 11 fixed, 44 fails, ...": the classes with their counts, in scan_classes' order
// (then "error").
std::string release_count_line(const std::vector<ReleaseRow>& rows);

// OUT/summary.md: the releases, a table of classes with their counts, then the rows that changed
// (every change, with its reduction's command and status) and the counts of the others by class.
std::string release_summary_markdown(const std::vector<ReleaseRow>& rows, const std::vector<std::string>& specs);
// OUT/summary.json: {"releases", "classes": {class: count}, "models": [{name, model, data, class,
// verdicts: [{release, verdict, signature, limit, reason}], changes: [{kind, from, to, command, bundle, status}]}]}.
std::string release_summary_json(const std::vector<ReleaseRow>& rows, const std::vector<std::string>& specs,
                                 const std::filesystem::path& out);
// Both, each written whole and renamed into place.
Status write_release_summary(const std::vector<ReleaseRow>& rows, const std::vector<std::string>& specs,
                             const std::filesystem::path& out);

}  // namespace reduce
