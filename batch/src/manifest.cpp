// Reading the models of a batch.
#include "batch/manifest.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace reduce {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> tab_columns(const std::string& line) {
  std::vector<std::string> cols;
  std::stringstream in(line);
  for (std::string col; std::getline(in, col, '\t');) cols.push_back(col);
  return cols;
}

Expected<std::vector<BatchItem>> read_manifest(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return Error{path.string(), "cannot read the manifest"};
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = tab_columns(line);
  auto column = [&](const char* name) -> int {
    const auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  };
  const int model_col = column("model"), engine_col = column("engine"), kind_col = column("kind"),
            ops_col = column("minimal_ops");
  if (model_col < 0 || engine_col < 0) return Error{path.string(), "the manifest needs 'model' and 'engine' columns"};
  std::vector<BatchItem> items;
  for (int line_no = 2; std::getline(in, line); ++line_no) {
    if (line.empty()) continue;
    const std::vector<std::string> cols = tab_columns(line);
    const int n = static_cast<int>(cols.size());
    if (n <= std::max(model_col, engine_col))
      return Error{path.string(), "line " + std::to_string(line_no) + ": too few columns"};
    BatchItem item{path.parent_path() / cols[model_col], cols[engine_col], "", "", "", {}, {}, false};
    if (kind_col >= 0 && kind_col < n) item.expected_kind = cols[kind_col];
    if (ops_col >= 0 && ops_col < n) item.expected_ops = cols[ops_col];
    items.push_back(std::move(item));
  }
  return items;
}

// The first row with a stem keeps it as its folder; later rows with the same stem get STEM-2,
// STEM-3, ... (skipping names another row has): stable for one manifest, so a batch resumes.
void assign_folders(std::vector<BatchItem>& items) {
  std::set<std::string> taken;
  for (const auto& item : items) taken.insert(item_stem(item));
  std::set<std::string> used;
  for (auto& item : items) {
    const std::string stem = item_stem(item);
    std::string name = stem;
    for (int k = 2; used.count(name); ++k) {
      name = stem + "-" + std::to_string(k);
      if (taken.count(name)) name = stem;  // another row's own stem: try the next number
    }
    used.insert(name);
    taken.insert(name);
    item.folder = name;
  }
}

Expected<std::vector<BatchItem>> read_items(const fs::path& source, const std::optional<std::string>& engine) {
  std::error_code ec;
  const bool folder = fs::is_directory(source, ec);
  if (folder && fs::exists(source / "manifest.tsv")) return read_manifest(source / "manifest.tsv");
  if (!folder) return read_manifest(source);
  if (!engine) return Error{source.string(), "no manifest.tsv in this folder; give --engine"};
  std::vector<BatchItem> items;
  for (const auto& e : fs::directory_iterator(source, ec)) {
    std::error_code kind;
    if (e.path().extension() == ".onnx" && !e.is_directory(kind)) {
      items.push_back({e.path(), *engine, "", "", "", {}, {}, false});
    } else if (e.is_directory(kind) && fs::is_regular_file(e.path() / "model.onnx", kind)) {
      // An ONNX test case: its first data set, when it has one, gives the inputs and expected outputs.
      const fs::path data = e.path() / "test_data_set_0";
      items.push_back({e.path() / "model.onnx", *engine, "", "", "", fs::is_directory(data, kind) ? data : fs::path(), {}, true});
    }
  }
  if (ec) return Error{source.string(), "cannot list the folder: " + ec.message()};
  std::sort(items.begin(), items.end(), [](const BatchItem& a, const BatchItem& b) { return a.model < b.model; });
  return items;
}

}  // namespace

std::string item_stem(const BatchItem& item) {
  return item.test_case ? item.model.parent_path().filename().string() : item.model.stem().string();
}

Expected<std::vector<BatchItem>> batch_items(const fs::path& source, const std::optional<std::string>& engine) {
  REDUCE_ASSIGN(std::vector<BatchItem> items, read_items(source, engine));
  assign_folders(items);
  return items;
}

}  // namespace reduce
