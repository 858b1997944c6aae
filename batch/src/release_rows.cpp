// The rows of a release scan over many models: kept one file per model, planned into reductions, summarized.
#include "batch/release_rows.h"

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

constexpr uint64_t kMaxRowFileBytes = 16 << 20;  // a row holds a few messages; anything larger is not ours

Json verdict_json(const ReleaseVerdict& r) {
  Json j = {{"release", r.spec}};
  if (!r.verdict) {
    j["verdict"] = "not run";
    j["reason"] = r.not_run;
    return j;
  }
  const Verdict& v = *r.verdict;
  const FailureSignature& s = v.signature;
  j["verdict"] = r.cannot_take() ? "cannot take" : v.invalid ? "invalid" : s.fails() ? "fails" : "passes";
  if (r.cannot_take()) j["limit"] = v.cannot_take;
  if (v.invalid) j["reason"] = v.invalid_reason;
  if (s.fails())
    j["signature"] = {{"kind", to_string(s.kind)}, {"message", shown_message(s.message)}, {"normalized", s.normalized},
                      {"signal", s.signal}};
  return j;
}

std::optional<ReleaseVerdict> verdict_from(const Json& j) {
  if (!j.is_object() || !j.contains("release") || !j.contains("verdict")) return std::nullopt;
  ReleaseVerdict r{j.at("release").get<std::string>(), std::nullopt, ""};
  const std::string verdict = j.at("verdict").get<std::string>();
  if (verdict == "not run") {
    r.not_run = j.value("reason", "");
    return r;
  }
  Verdict v;
  v.invalid = verdict == "invalid" || (verdict == "cannot take" && j.contains("reason"));
  v.invalid_reason = j.value("reason", "");
  v.cannot_take = j.value("limit", "");
  if (j.contains("signature")) {
    const Json& s = j.at("signature");
    const std::string kind = s.value("kind", "");
    for (int k = 1; k <= static_cast<int>(FailureKind::Shape); ++k)
      if (kind == to_string(static_cast<FailureKind>(k))) v.signature.kind = static_cast<FailureKind>(k);
    if (!v.signature.fails()) return std::nullopt;
    v.signature.message = s.value("message", "");
    v.signature.normalized = s.value("normalized", "");
    v.signature.signal = s.value("signal", 0);
  }
  r.verdict = std::move(v);
  return r;
}

// A table cell: no '|' or line break of the engine's message breaks the row.
std::string cell(std::string text, size_t limit = 160) {
  for (char& c : text)
    if (c == '|' || c == '\n' || c == '\r') c = ' ';
  return text.size() > limit ? text.substr(0, limit) + "..." : text;
}

std::map<std::string, size_t> class_counts(const std::vector<ReleaseRow>& rows) {
  std::map<std::string, size_t> counts;
  for (const auto& row : rows) ++counts[row.row_class()];
  return counts;
}

std::vector<std::string> classes_in_order() {
  std::vector<std::string> classes = scan_classes();
  classes.push_back("error");
  return classes;
}

}  // namespace

fs::path release_row_file(const fs::path& out, const BatchItem& item) { return out / "releases" / (item.folder + ".json"); }

std::optional<ReleaseRow> read_release_row(const fs::path& out, const BatchItem& item, const std::vector<std::string>& specs) {
  const fs::path file = release_row_file(out, item);
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (ec || size > kMaxRowFileBytes) return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  const Json j = Json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("model", "") != item.model.string() || !j.contains("verdicts"))
    return std::nullopt;
  ReleaseRow row{item, {}, j.value("error", ""), {}};
  for (const Json& v : j.at("verdicts")) {
    auto r = verdict_from(v);
    if (!r) return std::nullopt;
    row.scan.push_back(std::move(*r));
  }
  if (row.error.empty()) {
    if (row.scan.size() != specs.size()) return std::nullopt;
    for (size_t i = 0; i < specs.size(); ++i)
      if (row.scan[i].spec != specs[i]) return std::nullopt;
  }
  return row;
}

Status write_release_row(const fs::path& out, const ReleaseRow& row) {
  Json verdicts = Json::array();
  for (const auto& r : row.scan) verdicts.push_back(verdict_json(r));
  Json j = {{"model", row.item.model.string()}, {"verdicts", verdicts}};
  if (!row.error.empty()) j["error"] = row.error;
  std::error_code ec;
  fs::create_directories(out / "releases", ec);
  if (ec) return Error{(out / "releases").string(), "cannot create folder: " + ec.message()};
  return write_file_atomic(release_row_file(out, row.item), j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
}

void plan_release_reductions(ReleaseRow& row, const fs::path& out, const std::string& options) {
  row.reductions.clear();
  if (!row.error.empty()) return;
  std::vector<ReleaseChange> asked;
  for (const auto& c : release_changes(row.scan))
    if (c.asks_for_reduction()) asked.push_back(c);
  for (const ReleaseChange& c : asked) {
    BatchItem item = row.item;
    item.engine = row.scan[c.failing()].spec;
    item.reference = c.passing() ? row.scan[*c.passing()].spec : std::string();
    if (asked.size() > 1) item.folder += "." + release_folder_word(item.engine);
    row.reductions.push_back({c, reduce_command_for(row.scan, c, item.model.string(), options, (out / item.folder).string()),
                              item, "not started", std::nullopt});
  }
}

std::string release_count_line(const std::vector<ReleaseRow>& rows) {
  const auto counts = class_counts(rows);
  std::string line = std::to_string(rows.size()) + " models:";
  bool first = true;
  for (const auto& c : classes_in_order())
    if (const auto it = counts.find(c); it != counts.end()) {
      line += (first ? " " : ", ") + std::to_string(it->second) + " " + c;
      first = false;
    }
  return line;
}

std::string release_summary_markdown(const std::vector<ReleaseRow>& rows, const std::vector<std::string>& specs) {
  std::ostringstream md;
  md << "# Release scan\n\n" << rows.size() << " models on " << specs.size() << " releases:";
  for (const auto& s : specs) md << " `" << s << "`";
  md << "\n\n| class | models | what it means |\n|---|---|---|\n";
  const std::map<std::string, std::string> meaning{
      {"regressed", "passes on a release, fails on the next that runs it"},
      {"failure changed", "fails on two neighbouring releases, another way on the newer"},
      {"fixed", "fails on a release, passes on the next that runs it"},
      {"fails", "every release that runs it fails the same way"},
      {"support removed", "a release runs it and passes, the next cannot take it"},
      {"support added", "a release cannot take it (format, opset, kernel or type it lacks), the next runs it and passes"},
      {"passes", "every release that runs it passes"},
      {"cannot take", "no release takes it"},
      {"not run", "no release ran (not installed, or the tool's limit)"},
      {"error", "the model could not be checked (it does not load)"}};
  const auto counts = class_counts(rows);
  for (const auto& c : classes_in_order())
    if (const auto it = counts.find(c); it != counts.end()) md << "| " << c << " | " << it->second << " | " << meaning.at(c) << " |\n";
  md << "\n## Changes of behaviour\n\n";
  bool any = false;
  for (const auto& row : rows) {
    const std::string c = row.row_class();
    if (c != "regressed" && c != "failure changed" && c != "fixed") continue;
    any = true;
    md << "### " << row.item.folder << " (" << c << ")\n\n";
    for (const auto& r : row.scan) md << "- `" << r.spec << "`: " << cell(r.line(), 300) << "\n";
    md << "\n";
    const std::string line = release_scan_summary(row.scan, row.item.model.string());
    std::istringstream lines(line);
    for (std::string l; std::getline(lines, l);) md << "- " << cell(l.substr(0, l.find(": reduce ")), 400) << "\n";
    for (const auto& red : row.reductions)
      md << "- reduction (" << red.status << (red.bucket ? ", " + red.bucket->ops : "") << "): `" << red.command << "`\n";
    md << "\n";
  }
  if (!any) md << "No model changes behaviour between releases.\n";
  // The models every release that runs them gets wrong: no release to reduce against, said in one line each.
  if (counts.count("fails")) {
    md << "\n## Failing on every release that runs them\n\n| model | releases that run it | the newest one's failure |\n|---|---|---|\n";
    for (const auto& row : rows) {
      if (row.row_class() != "fails") continue;
      std::string ran, newest;
      for (const auto& r : row.scan)
        if (r.ran()) {
          ran += (ran.empty() ? "`" : ", `") + r.spec + "`";
          newest = r.verdict->signature.to_string();
        }
      md << "| " << row.item.folder << " | " << ran << " | " << cell(newest) << " |\n";
    }
  }
  // Changes of support, by the pair of releases (a count: the rows are in summary.json).
  std::map<std::string, size_t> support;
  for (const auto& row : rows)
    for (const auto& c : release_changes(row.scan))
      if (!c.asks_for_reduction())
        ++support[std::string(to_string(c.kind)) + " between `" + row.scan[c.before].spec + "` and `" + row.scan[c.after].spec + "`"];
  if (!support.empty()) {
    md << "\n## Changes of support\n\n| change | models |\n|---|---|\n";
    for (const auto& [what, n] : support) md << "| " << what << " | " << n << " |\n";
  }
  const auto errors = counts.find("error");
  if (errors != counts.end()) {
    md << "\n## Models that could not be checked\n\n";
    for (const auto& row : rows)
      if (!row.error.empty()) md << "- " << row.item.folder << ": " << cell(row.error, 300) << "\n";
  }
  return md.str();
}

std::string release_summary_json(const std::vector<ReleaseRow>& rows, const std::vector<std::string>& specs, const fs::path& out) {
  Json classes = Json::object();
  const auto counts = class_counts(rows);
  for (const auto& c : classes_in_order())
    if (const auto it = counts.find(c); it != counts.end()) classes[c] = it->second;
  Json models = Json::array();
  for (const auto& row : rows) {
    Json verdicts = Json::array(), changes = Json::array();
    for (const auto& r : row.scan) verdicts.push_back(verdict_json(r));
    for (const auto& c : release_changes(row.scan)) {
      Json change = {{"kind", to_string(c.kind)}, {"from", row.scan[c.before].spec}, {"to", row.scan[c.after].spec}};
      for (const auto& red : row.reductions)
        if (red.change.before == c.before && red.change.after == c.after) {
          change["command"] = red.command;
          change["bundle"] = (out / red.item.folder).string();
          change["status"] = red.status;
        }
      changes.push_back(std::move(change));
    }
    Json m = {{"name", row.item.folder}, {"model", row.item.model.string()}, {"class", row.row_class()}};
    if (!row.item.data.empty()) m["data"] = row.item.data.string();
    if (!row.error.empty()) m["error"] = row.error;
    m["verdicts"] = std::move(verdicts);
    m["changes"] = std::move(changes);
    models.push_back(std::move(m));
  }
  const Json j = {{"releases", specs}, {"models_scanned", rows.size()}, {"classes", classes}, {"models", models}};
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Status write_release_summary(const std::vector<ReleaseRow>& rows, const std::vector<std::string>& specs, const fs::path& out) {
  REDUCE_TRY(write_file_atomic(out / "summary.md", release_summary_markdown(rows, specs)));
  return write_file_atomic(out / "summary.json", release_summary_json(rows, specs, out));
}

}  // namespace reduce
