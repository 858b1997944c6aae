// `reduce batch DIR|MANIFEST -o OUT`: reduces every model (engine spec per model from a manifest),
// skips models already reduced, groups reproducers into buckets of the same failure and writes
// OUT/summary.md and OUT/summary.json.
#include <boost/program_options.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "command.h"
#include "command_line.h"
#include "core/mapped_file.h"
#include "json_writer.h"

namespace reduce::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

struct BatchItem {
  fs::path model;
  std::string engine;
  std::string expected_kind;  // from the manifest, may be empty
  std::string expected_ops;   // ground truth op multiset, may be empty
};

struct BatchOutcome {
  std::string status;  // "reduced", "no failure", "error"
  std::string failure, ops, form;
  size_t original_nodes = 0, reduced_nodes = 0;
  std::string checks, seconds, one_minimal;
};

Expected<std::vector<BatchItem>> read_manifest(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return Error{path.string(), "cannot read the manifest"};
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  {
    std::stringstream h(line);
    for (std::string col; std::getline(h, col, '\t');) header.push_back(col);
  }
  auto column = [&](const char* name) -> int {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    return -1;
  };
  const int model_col = column("model"), engine_col = column("engine"), kind_col = column("kind"), ops_col = column("minimal_ops");
  if (model_col < 0 || engine_col < 0) return Error{path.string(), "the manifest needs 'model' and 'engine' columns"};
  std::vector<BatchItem> items;
  for (int line_no = 2; std::getline(in, line); ++line_no) {
    if (line.empty()) continue;
    std::vector<std::string> cols;
    std::stringstream l(line);
    for (std::string col; std::getline(l, col, '\t');) cols.push_back(col);
    if (static_cast<int>(cols.size()) <= std::max(model_col, engine_col))
      return Error{path.string(), "line " + std::to_string(line_no) + ": too few columns"};
    BatchItem item{path.parent_path() / cols[model_col], cols[engine_col], "", ""};
    if (kind_col >= 0 && kind_col < static_cast<int>(cols.size())) item.expected_kind = cols[kind_col];
    if (ops_col >= 0 && ops_col < static_cast<int>(cols.size())) item.expected_ops = cols[ops_col];
    items.push_back(std::move(item));
  }
  return items;
}

// Reads bucket.txt of a finished bundle.
BatchOutcome read_bucket(const fs::path& dir) {
  BatchOutcome o;
  std::ifstream in(dir / "bucket.txt");
  if (!in) return o;
  o.status = "reduced";
  std::string line;
  bool in_form = false;
  while (std::getline(in, line)) {
    if (in_form) { o.form += line + "\n"; continue; }
    const auto sp = line.find(' ');
    const std::string key = line.substr(0, sp), value = sp == std::string::npos ? "" : line.substr(sp + 1);
    if (key == "failure") o.failure = value;
    else if (key == "nodes") std::istringstream(value) >> o.original_nodes >> o.reduced_nodes;
    else if (key == "checks") o.checks = value;
    else if (key == "seconds") o.seconds = value;
    else if (key == "one_minimal") o.one_minimal = value;
    else if (key == "ops") o.ops = value;
    else if (key == "form") in_form = true;
  }
  return o;
}

// "Mul:1,Add:2" and " Add:2 Mul:1" name the same multiset.
std::string normalized_ops(std::string ops) {
  for (char& c : ops) if (c == ',') c = ' ';
  std::vector<std::string> items;
  std::istringstream in(ops);
  for (std::string item; in >> item;) items.push_back(item);
  std::sort(items.begin(), items.end());
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

}  // namespace

int batch_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: reduce batch DIR|MANIFEST -o OUT [options]\n\n"
      "Reduces every model of a manifest (tab-separated, with 'model' and 'engine' columns, as written\n"
      "by reduce-corpus) or of a folder (its manifest.tsv, else every .onnx with --engine) into\n"
      "OUT/<model-stem>/. Models whose bundle is complete are skipped, so an interrupted batch resumes.\n"
      "Reproducers of the same failure and the same reduced graph form one bucket in OUT/summary.md\n"
      "and OUT/summary.json.\n\noptions");
  opts.add_options()("help,h", "show this help")("source", po::value<std::string>(), "manifest file or folder")
      ("output,o", po::value<std::string>(), "output folder")
      ("engine", po::value<std::string>(), "engine spec for models without one (folders without a manifest)")
      ("jobs,j", po::value<int>()->default_value(0), "checks in flight per reduction (0: the number of cores)")
      ("reduce-option", po::value<std::vector<std::string>>()->multitoken(),
       "extra option passed to each reduction (e.g. --reduce-option=--timeout=60)");
  po::positional_options_description pos;
  pos.add("source", 1);
  po::variables_map vm;
  if (auto done = parse_command_line(args, "batch", opts, pos, vm, "source", "DIR|MANIFEST")) return *done;
  if (!vm.count("output")) {
    std::cerr << "error: batch: missing -o OUT\n";
    return kExitUsage;
  }
  const fs::path source = vm["source"].as<std::string>(), out = vm["output"].as<std::string>();
  std::vector<BatchItem> items;
  std::error_code ec;
  if (fs::is_directory(source, ec) && !fs::exists(source / "manifest.tsv")) {
    if (!vm.count("engine")) {
      std::cerr << "error: " << source.string() << ": no manifest.tsv in this folder; give --engine\n";
      return kExitUsage;
    }
    for (const auto& e : fs::directory_iterator(source, ec))
      if (e.path().extension() == ".onnx") items.push_back({e.path(), vm["engine"].as<std::string>(), "", ""});
    std::sort(items.begin(), items.end(), [](const BatchItem& a, const BatchItem& b) { return a.model < b.model; });
  } else {
    auto manifest = read_manifest(fs::is_directory(source, ec) ? source / "manifest.tsv" : source);
    if (!manifest) {
      std::cerr << "error: " << manifest.error().message() << "\n";
      return kExitUsage;
    }
    items = std::move(*manifest);
  }
  if (items.empty()) {
    std::cerr << "error: " << source.string() << ": no models\n";
    return kExitUsage;
  }
  fs::create_directories(out, ec);
  if (ec) {
    std::cerr << "error: " << out.string() << ": cannot create folder: " << ec.message() << "\n";
    return kExitUsage;
  }
  std::vector<BatchOutcome> outcomes;
  size_t done = 0, skipped = 0;
  for (const auto& item : items) {
    const fs::path dir = out / item.model.stem();
    BatchOutcome o = read_bucket(dir);
    if (o.status == "reduced") {
      ++skipped;
    } else {
      std::cerr << "batch: [" << (&item - &items[0]) + 1 << "/" << items.size() << "] " << item.model.string() << " on "
                << item.engine << "\n";
      std::vector<std::string> reduce_args{item.model.string(), "--engine", item.engine, "-o", dir.string(), "-j",
                                           std::to_string(vm["jobs"].as<int>())};
      if (vm.count("reduce-option"))
        for (const auto& extra : vm["reduce-option"].as<std::vector<std::string>>()) reduce_args.push_back(extra);
      const int code = reduce_command(reduce_args);
      o = read_bucket(dir);
      if (code == 3) o.status = "no failure";
      else if (code != 0 || o.status.empty()) o.status = "error (exit " + std::to_string(code) + ")";
      ++done;
    }
    outcomes.push_back(o);
  }
  // Buckets: same failure key and same canonical form of the reduced graph.
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> buckets;
  for (size_t i = 0; i < outcomes.size(); ++i)
    if (outcomes[i].status == "reduced") buckets[{outcomes[i].failure, outcomes[i].form}].push_back(i);

  std::ostringstream md;
  md << "# reduce batch: " << items.size() << " models, " << buckets.size() << " distinct failures\n\n"
     << "| model | engine | status | failure | nodes | reduced | op types | 1-minimal | expected ops | checks | seconds |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& o = outcomes[i];
    std::string expected = items[i].expected_ops;
    if (!expected.empty()) expected += normalized_ops(expected) == normalized_ops(o.ops) ? " (reached)" : " (NOT reached)";
    md << "| " << items[i].model.filename().string() << " | `" << items[i].engine << "` | " << o.status << " | " << o.failure
       << " | " << o.original_nodes << " | " << o.reduced_nodes << " | " << o.ops << " | " << o.one_minimal << " | "
       << expected << " | " << o.checks << " | " << o.seconds << " |\n";
  }
  md << "\n## Buckets\n\n";
  size_t b = 0;
  for (const auto& [key, members] : buckets) {
    md << "### " << ++b << ". " << key.first << " (" << members.size() << " model" << (members.size() > 1 ? "s" : "")
       << ")\n\nreduced graph: " << outcomes[members[0]].ops << "\n\n";
    for (size_t i : members) md << "- " << items[i].model.filename().string() << " -> `" << (fs::path(items[i].model.stem()) / "model.onnx").string() << "`\n";
    md << "\n";
  }
  JsonWriter j;
  j.begin_object().field("models", static_cast<uint64_t>(items.size())).field("buckets", static_cast<uint64_t>(buckets.size()));
  j.key("results").begin_array();
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& o = outcomes[i];
    j.begin_object().field("model", items[i].model.string()).field("engine", items[i].engine).field("status", o.status)
        .field("failure", o.failure).field("original_nodes", static_cast<uint64_t>(o.original_nodes))
        .field("reduced_nodes", static_cast<uint64_t>(o.reduced_nodes)).field("op_types", o.ops)
        .field("one_minimal", o.one_minimal == "true").field("expected_op_types", items[i].expected_ops)
        .field("reached_expected", !items[i].expected_ops.empty() && normalized_ops(items[i].expected_ops) == normalized_ops(o.ops))
        .field("bundle", (out / items[i].model.stem()).string()).end_object();
  }
  j.end_array();
  j.key("buckets_detail").begin_array();
  for (const auto& [key, members] : buckets) {
    j.begin_object().field("failure", key.first).field("op_types", outcomes[members[0]].ops).key("models").begin_array();
    for (size_t i : members) j.value(items[i].model.filename().string());
    j.end_array().end_object();
  }
  j.end_array().end_object();
  if (Status s = write_file_atomic(out / "summary.md", md.str()); !s.ok()) {
    std::cerr << "error: " << s.error().message() << "\n";
    return kExitUsage;
  }
  if (Status s = write_file_atomic(out / "summary.json", j.str()); !s.ok()) {
    std::cerr << "error: " << s.error().message() << "\n";
    return kExitUsage;
  }
  std::cout << items.size() << " models (" << done << " reduced now, " << skipped << " already done), " << buckets.size()
            << " buckets; summary: " << (out / "summary.md").string() << "\n";
  return kExitOk;
}

}  // namespace reduce::cli
