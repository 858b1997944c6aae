// docs/contributing.md's "Where do I add ..." table against the tree: for each row with a registry,
// every entry of its .def has its code where the row says, the row's folder is globbed by CMake
// (so no CMake edit), the declarations come from the .def (so no header edit), and the row's count
// of files is what that makes. Subcommands (kSubcommands in cli/main.cpp) the same way. The row
// for a report.json key says docs/session.md lists them: every key report_json writes, in its order.
// docs/engine.md's "parsed once, up front": the places outside adapters/ that parse a spec string.
// Engine kinds name their fields; no module has an include cycle between the folders of its src/.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "report/report.h"

namespace {

namespace fs = std::filesystem;
const fs::path kRoot = REDUCE_SOURCE_DIR;

std::string read(const fs::path& path) {
  std::ifstream in(kRoot / path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The arguments of every `MACRO(...)` call at the start of a line (not in a #define), split at
// top-level commas (string literals and nested parentheses kept whole), each trimmed.
std::vector<std::vector<std::string>> entries(const std::string& text, const std::string& macro) {
  std::vector<std::vector<std::string>> out;
  for (size_t at = text.find(macro + "("); at != std::string::npos; at = text.find(macro + "(", at + 1)) {
    if (at > 0 && text[at - 1] != '\n') continue;
    std::vector<std::string> args(1);
    int depth = 0;
    for (size_t i = at + macro.size() + 1; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '"') {
        const size_t end = text.find('"', i + 1);
        args.back() += text.substr(i, end - i + 1);
        i = end;
      } else if (c == '(') {
        ++depth, args.back() += c;
      } else if (c == ')' && depth > 0) {
        --depth, args.back() += c;
      } else if (c == ')') {
        break;
      } else if (c == ',' && depth == 0) {
        args.emplace_back();
      } else {
        args.back() += c;
      }
    }
    for (auto& a : args) a = std::regex_replace(a, std::regex("^\\s+|\\s+$"), "");
    out.push_back(args);
  }
  return out;
}

// The files of `folder` whose name matches `pattern` (a regex on the file name).
std::vector<fs::path> files(const fs::path& folder, const std::string& pattern) {
  std::vector<fs::path> out;
  // Family folders below it too (the op files: engine/src/reference/ops/<family>/).
  for (const auto& e : fs::recursive_directory_iterator(kRoot / folder))
    if (e.is_regular_file() && std::regex_match(e.path().filename().string(), std::regex(pattern)))
      out.push_back(fs::relative(e.path(), kRoot));
  return out;
}

// The number in the "files" column of the row whose "what" cell starts with `what`.
int documented_count(const std::string& what) {
  const std::string doc = read("docs/contributing.md");
  const size_t row = doc.find("\n| " + what);
  if (row == std::string::npos) return -1;
  const size_t cell = doc.find('|', row + 2);
  return std::stoi(doc.substr(cell + 1));
}

struct Recipe {
  std::string what;        // the row's "what" cell starts so
  fs::path registry;       // the .def file
  std::string macro;       // its entries
  size_t argument;         // which argument names the entry's code
  fs::path folder;         // where that code lives
  std::string file;        // its files there (regex on the name)
  std::string definition;  // how the code is found there ({} is the argument)
  fs::path cmake;          // the CMakeLists.txt that must glob `folder`
  fs::path declarations;   // the file that declares each entry's code from the .def ("": none needed)
  int others = 0;          // files the row counts beyond the new file and the .def line
};

const std::vector<Recipe>& recipes() {
  static const std::vector<Recipe> list = {
      {"an ONNX operator", "engine/src/reference/kernels.def", "REDUCE_KERNEL", 4, "engine/src/reference/ops", ".*\\.cpp",
       "\\b{}\\b", "engine/CMakeLists.txt", "engine/src/reference/registry.cpp"},
      {"a graph pass of the optimized engine", "engine/src/optimized/passes.def", "OPT_PASS", 1, "engine/src/optimized",
       "pass_.*\\.cpp", "\\b{}\\(PlanGraph", "engine/CMakeLists.txt", "engine/src/optimized/optimized_engine.cpp"},
      {"a fused kernel of the optimized engine", "engine/src/optimized/fused_kernels.def", "REDUCE_FUSED_KERNEL", 1,
       "engine/src/optimized", "kernel_.*\\.cpp", "\\b{}\\(const FusedKernelSpec", "engine/CMakeLists.txt",
       "engine/src/optimized/fused_kernel.cpp"},
      {"an engine kind", "adapters/include/adapters/engines.def", "REDUCE_ENGINE", 0, "adapters/src/kinds", ".*\\.cpp",
       "const KindOps {} =", "adapters/CMakeLists.txt", "adapters/src/kinds/engine_kinds.h"},
      {"a reduction pass", "reducer/src/passes/passes.def", "REDUCER_PASS", 1, "reducer/src/passes", ".*\\.cpp",
       "PassStatePtr {}\\(", "reducer/CMakeLists.txt", "reducer/src/passes/passes.h"},
      {"a search strategy", "reducer/src/strategies/strategies.def", "REDUCER_STRATEGY", 1, "reducer/src/strategies",
       ".*\\.cpp", "Strategy {}\\(", "reducer/CMakeLists.txt", "reducer/src/strategies/strategies.h"},
      {"a `reduce precision` strategy", "precision/src/strategies/strategies.def", "PRECISION_STRATEGY", 1,
       "precision/src/strategies", ".*\\.cpp", "Status {}\\(", "precision/CMakeLists.txt",
       "precision/src/strategies/strategies.h"},
      {"a corpus family", "corpus/generator/families.def", "CORPUS_FAMILY", 4, "corpus/generator/triggers", ".*\\.cpp",
       "void {}\\(GraphBuilder", "corpus/CMakeLists.txt", "corpus/generator/triggers/triggers.h"},
      {"a corpus family", "corpus/generator/precision.def", "PRECISION_FAMILY", 4, "corpus/generator/triggers",
       ".*\\.cpp", "void {}\\(GraphBuilder", "corpus/CMakeLists.txt", "corpus/generator/triggers/triggers.h"},
      {"a corpus family", "corpus/generator/quantized.def", "QUANTIZED_FAMILY", 3, "corpus/generator/triggers",
       ".*\\.cpp", "void {}\\(GraphBuilder", "corpus/CMakeLists.txt", "corpus/generator/triggers/triggers.h"},
      // A fault is a line in faults.def and a section in docs/faults.md (its code lives in the pass or
      // kernel it corrupts: the row says "2 + the code that misbehaves").
      {"a fault of the catalog", "engine/include/engine/faults.def", "REDUCE_FAULT", 1, "docs", "faults\\.md", "## {}\\n",
       "", "engine/include/engine/fault.h"},
  };
  return list;
}

std::string unquoted(const std::string& s) { return s.size() >= 2 && s.front() == '"' ? s.substr(1, s.size() - 2) : s; }

std::string escaped(const std::string& s) { return std::regex_replace(s, std::regex("[.^$|()\\[\\]{}*+?\\\\-]"), "\\$&"); }

TEST(Recipes, EveryRegistryEntryHasItsCodeWhereTheRowSays) {
  for (const Recipe& r : recipes()) {
    const auto list = entries(read(r.registry), r.macro);
    EXPECT_GE(list.size(), 2u) << r.registry << ": no " << r.macro << " entries read";
    std::vector<std::string> candidates;  // the texts of the files the code may be in, read once
    for (const auto& f : files(r.folder, r.file)) candidates.push_back(read(f));
    for (const auto& entry : list) {
      ASSERT_GT(entry.size(), r.argument) << r.registry;
      const std::string name = unquoted(entry[r.argument]);
      const std::regex defined(std::regex_replace(r.definition, std::regex("\\{\\}"), escaped(name)));
      size_t found = 0;
      for (const auto& text : candidates) found += std::regex_search(text, defined);
      EXPECT_EQ(found, 1u) << r.registry << ": " << name << " should be in one file " << r.folder / r.file;
    }
  }
}

TEST(Recipes, EachRowsFolderIsGlobbedAndItsDeclarationsComeFromTheRegistry) {
  for (const Recipe& r : recipes()) {
    if (!r.cmake.empty()) {
      const fs::path relative = fs::relative(r.folder, r.cmake.parent_path());
      const std::string cmake = read(r.cmake);
      const std::regex globbed("file\\(GLOB(?:_RECURSE)? \\w+ CONFIGURE_DEPENDS \\$\\{CMAKE_CURRENT_SOURCE_DIR\\}/" +
                               escaped(relative.string()) + "/[a-z_]*\\*\\.cpp\\)");
      EXPECT_TRUE(std::regex_search(cmake, globbed)) << r.cmake << " does not glob " << relative << ": the row would need a CMake line";
    }
    const std::string declaring = read(r.declarations);
    EXPECT_NE(declaring.find("#define " + r.macro + "("), std::string::npos) << r.declarations;
    EXPECT_NE(declaring.find(r.registry.filename().string() + "\""), std::string::npos)
        << r.declarations << " should include " << r.registry.filename();
  }
}

TEST(Recipes, EachRowCountsTheNewFileTheRegistryLineAndNothingElse) {
  for (const Recipe& r : recipes()) {
    // An op of an existing family goes into its family's file: still two files.
    EXPECT_EQ(documented_count(r.what), 2 + r.others) << "docs/contributing.md, \"" << r.what << "\"";
  }
}

// A subcommand: its file, its declaration in cli/command.h, its line in kSubcommands, its line in
// cli/CMakeLists.txt: the row's 4.
TEST(Recipes, EverySubcommandHasTheFourPlacesTheRowNames) {
  const std::string main = read("cli/main.cpp"), command = read("cli/command.h"), cmake = read("cli/CMakeLists.txt");
  const std::string table = main.substr(main.find("kSubcommands[] = {"));
  const std::regex row("\\{\"([a-z]+)\", (?:nullptr|reduce::cli::(\\w+)), (?:nullptr|reduce::cli::(\\w+)),");
  size_t seen = 0;
  for (std::sregex_iterator it(table.begin(), table.end(), row), end; it != end && it->position() < static_cast<long>(table.find("};")); ++it) {
    const std::string name = (*it)[1], function = (*it)[2].matched ? (*it)[2] : (*it)[3];
    EXPECT_EQ(function, name + "_command");
    EXPECT_TRUE(fs::exists(kRoot / "cli" / (name + "_command.cpp"))) << name;
    EXPECT_NE(command.find("int " + name + "_command("), std::string::npos) << name;
    EXPECT_NE(cmake.find("  " + name + "_command.cpp\n"), std::string::npos) << name;
    ++seen;
  }
  EXPECT_GE(seen, 8u);
  EXPECT_EQ(documented_count("a subcommand"), 4);
}

// The top-level keys of the report.json report_json writes, in its order. Every optional part is
// given, so that each key holds what it holds in a full reduction (not only `null`).
std::vector<std::string> written_report_keys() {
  reduce::ReductionReport r;
  r.model_path = "m.onnx";
  r.original_nodes = 50;
  r.reduced_nodes = 2;
  r.reduced_op_types = {{"Conv", 1}, {"Relu", 1}};
  r.failure.kind = reduce::FailureKind::Mismatch;
  r.timing_cache_builds = 3;
  r.timing_cache_files = 1;
  r.engine_run_budget = 100;
  r.simplify_runs_max = 20;
  r.first_small = reduce::ReductionReport::FirstSmall{4, 1.5, 12};
  r.passes = {{"certify", 3, 0, 0.25}};
  r.error_sources = {{"n", "Mul", "y", 2.5}};
  r.nonfinite_born = r.error_sources.front();
  r.reproduction_note = "a note";
  const auto json = nlohmann::ordered_json::parse(reduce::report_json(r));
  std::vector<std::string> keys;
  for (const auto& item : json.items()) keys.push_back(item.key());
  return keys;
}

// The keys docs/session.md lists between its report.json markers, one `- `KEY`` item each, in its order.
std::vector<std::string> documented_report_keys() {
  const std::string doc = read("docs/session.md");
  const size_t begin = doc.find("<!-- report.json keys -->"), end = doc.find("<!-- end report.json keys -->");
  if (begin == std::string::npos || end == std::string::npos || end < begin) return {};
  const std::string list = doc.substr(begin, end - begin);
  std::vector<std::string> keys;
  const std::regex item("\\n *- `([a-z_]+)`");
  for (std::sregex_iterator it(list.begin(), list.end(), item), last; it != last; ++it) keys.push_back((*it)[1]);
  return keys;
}

// docs/reducer.md and docs/contributing.md promise a test file per reduction pass.
TEST(Recipes, EveryReductionPassHasItsOwnTestFile) {
  const auto passes = entries(read("reducer/src/passes/passes.def"), "REDUCER_PASS");
  EXPECT_GE(passes.size(), 10u);
  for (const auto& pass : passes) {
    std::string file = unquoted(pass.at(0));
    std::replace(file.begin(), file.end(), '-', '_');
    EXPECT_TRUE(fs::exists(kRoot / "tests/reducer/passes" / (file + "_test.cpp")))
        << "no tests/reducer/passes/" << file << "_test.cpp for the pass " << pass.at(0);
  }
}

// README's "Engines" list names every kind of engines.def, each at the start of one item, and
// nothing else (issue 70: it had 10 items for 12 kinds).
TEST(Recipes, TheReadmeListsEveryEngineKind) {
  const auto kinds = entries(read("adapters/include/adapters/engines.def"), "REDUCE_ENGINE");
  EXPECT_GE(kinds.size(), 12u);
  const std::string readme = read("README.md");
  const size_t start = readme.find("\n## Engines\n");
  ASSERT_NE(start, std::string::npos) << "README.md has no \"## Engines\" section";
  const std::string section = readme.substr(start, readme.find("\n## ", start + 1) - start);
  std::vector<std::string> listed;
  const std::regex item("\\n- `([a-z0-9-]+)");
  for (std::sregex_iterator it(section.begin(), section.end(), item), last; it != last; ++it) listed.push_back((*it)[1]);
  std::vector<std::string> names;
  for (const auto& kind : kinds) names.push_back(unquoted(kind.at(1)));
  EXPECT_EQ(listed, names) << "README.md's Engines list, in engines.def's order";
}

// docs/engine.md: a spec string is parsed once, up front, and everything downstream asks the parsed
// value (Oracle::spec()). Outside adapters/ (which parses, make_engine of a string included) only the
// oracle and cli's one check of --engine/--reference may call parse_engine_spec (issue 70: it was 16
// calls in 11 files, each module parsing the string again).
TEST(Recipes, SpecStringsAreParsedInTwoPlacesOutsideAdapters) {
  const std::regex source(".*\\.(cpp|cc|h|hpp|def|inc)");
  std::vector<std::string> calls;  // one "FILE" per call
  for (const auto& top : fs::directory_iterator(kRoot)) {
    const std::string name = top.path().filename().string();
    // Build trees (build/, build-test/) and hidden folders (.cache, .git) hold no sources of the project.
    if (!top.is_directory() || name == "adapters" || name == "tests" || name.starts_with("build") || name.starts_with("."))
      continue;
    for (const auto& e : fs::recursive_directory_iterator(top.path())) {
      if (!e.is_regular_file() || !std::regex_match(e.path().filename().string(), source)) continue;
      const fs::path file = fs::relative(e.path(), kRoot);
      const std::string text = read(file);
      for (size_t at = text.find("parse_engine_spec("); at != std::string::npos; at = text.find("parse_engine_spec(", at + 1))
        calls.push_back(file.string());
    }
  }
  EXPECT_GE(calls.size(), 1u) << "the oracle parses its specs: the scan read nothing";
  std::sort(calls.begin(), calls.end());
  std::string listed;
  for (const auto& f : calls) listed += "\n  " + f;
  EXPECT_LE(calls.size(), 2u) << "parse_engine_spec( outside adapters/ and tests/ (ask Oracle::spec() instead):" << listed;
}

TEST(Recipes, EveryReportJsonKeyIsAFieldAndListedInTheSessionDoc) {
  const std::vector<std::string> written = written_report_keys(), listed = documented_report_keys();
  EXPECT_GE(written.size(), 40u);
  for (const auto& key : written)
    EXPECT_NE(std::find(listed.begin(), listed.end(), key), listed.end())
        << "docs/session.md does not list report.json's `" << key << "`";
  for (const auto& key : listed)
    EXPECT_NE(std::find(written.begin(), written.end(), key), written.end())
        << "docs/session.md lists `" << key << "`, which report_json does not write";
  EXPECT_EQ(listed, written) << "docs/session.md should list report.json's keys once each, in the order written";
}

// adapters/src/kinds/engine_kinds.h: every kind names the KindOps fields it sets (designated
// initializers), so that a field added to KindOps or a kind that leaves one out cannot shift the
// others by position (issue 70: eight of twelve kinds were lists of function pointers in order).
TEST(Recipes, EveryEngineKindNamesItsFields) {
  const auto kinds = entries(read("adapters/include/adapters/engines.def"), "REDUCE_ENGINE");
  ASSERT_GE(kinds.size(), 12u);
  std::string sources;
  for (const auto& e : fs::directory_iterator(kRoot / "adapters/src/kinds"))
    if (e.path().extension() == ".cpp") sources += read(fs::relative(e.path(), kRoot));
  for (const auto& kind : kinds) {
    const std::regex definition("const KindOps " + kind.at(0) + " = \\{\\s*([^\\s])");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(sources, m, definition)) << "no `const KindOps " << kind.at(0) << "` in adapters/src/kinds/";
    EXPECT_EQ(m[1].str(), ".") << kind.at(0) << "'s KindOps: name each field (.parse = ..., .make = ...)";
  }
}

// No include cycle between the folders of a module's src/ (issue 70: adapters' registry/, kinds/ and
// reproduction/ included each other): a folder's files include headers of folders below it only.
TEST(Recipes, NoModuleHasAnIncludeCycleBetweenItsFolders) {
  const std::regex include("#include \"([a-z_]+)/[A-Za-z0-9_]+\\.h\"");
  size_t modules = 0;
  for (const auto& top : fs::directory_iterator(kRoot)) {
    const fs::path src = top.path() / "src";
    if (!top.is_directory() || !fs::is_directory(src)) continue;
    ++modules;
    std::map<std::string, std::set<std::string>> uses;  // folder -> folders of src/ it includes from
    for (const auto& e : fs::recursive_directory_iterator(src)) {
      if (!e.is_regular_file()) continue;
      const fs::path rel = fs::relative(e.path(), src);
      if (rel.begin() == rel.end() || std::next(rel.begin()) == rel.end()) continue;  // a file of src/ itself
      const std::string folder = rel.begin()->string();
      const std::string text = read(fs::relative(e.path(), kRoot));
      for (std::sregex_iterator it(text.begin(), text.end(), include), last; it != last; ++it) {
        const std::string to = (*it)[1];
        if (to != folder && fs::is_directory(src / to)) uses[folder].insert(to);
      }
    }
    // Depth-first search for a folder reached again on its own path.
    std::map<std::string, int> state;  // 1: on the path, 2: done
    std::vector<std::string> path;
    std::function<bool(const std::string&)> cycle = [&](const std::string& f) {
      if (state[f] == 1) return path.push_back(f), true;
      if (state[f] == 2) return false;
      state[f] = 1;
      path.push_back(f);
      for (const auto& g : uses[f])
        if (cycle(g)) return true;
      path.pop_back();
      state[f] = 2;
      return false;
    };
    for (const auto& [folder, _] : uses) {
      path.clear();
      if (cycle(folder)) {
        std::string shown;
        for (const auto& f : path) shown += (shown.empty() ? "" : " -> ") + f;
        ADD_FAILURE() << top.path().filename().string() << "/src: include cycle " << shown;
        break;
      }
    }
  }
  EXPECT_GE(modules, 10u) << "the scan found no module";
}

}  // namespace
