// `reduce conformance DIR...`: runs ONNX backend test folders on an engine (the reference by default) and reports.
#include <boost/program_options.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <map>

#include "command.h"
#include "adapters/library_settings.h"
#include "command_line.h"
#include "oracle_options.h"
#include "conformance/conformance.h"
#include "adapters/engine_spec.h"

namespace reduce::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

// A known-failures file: one test name per line, each with its reason: a `# comment` on the line,
// or the comment block above it (a block covers the names that follow it up to a blank line).
// A name without a reason is refused: a failure nobody explained is not "known".
Expected<std::map<std::string, std::string>> read_known_failures(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return Error{path.string(), "cannot read the known-failures file"};
  auto trim = [](const std::string& t) {
    const auto b = t.find_first_not_of(" \t\r"), e = t.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
  };
  std::map<std::string, std::string> known;
  std::string block;  // the comment block above the current line
  bool block_open = false;  // still in a block's comment lines
  size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const auto hash = line.find('#');
    const std::string name = trim(line.substr(0, hash)), comment = hash == std::string::npos ? "" : trim(line.substr(hash + 1));
    if (name.empty()) {
      if (comment.empty() && trim(line).empty()) {
        block.clear();
      } else if (hash != std::string::npos) {
        if (!block_open) block.clear();
        if (!comment.empty()) block += (block.empty() ? "" : " ") + comment;
      }
      block_open = hash != std::string::npos;
      continue;
    }
    block_open = false;
    const std::string reason = comment.empty() ? block : comment;
    if (reason.empty())
      return Error{path.string(), "line " + std::to_string(number) + ": '" + name +
                                      "' has no reason (a # comment on its line or above it)"};
    known.emplace(name, reason);
  }
  return known;
}

po::options_description conformance_options() {
  po::options_description opts(
      "usage: reduce conformance DIR... [options]\n\n"
      "Runs every ONNX backend test folder (model.onnx + test_data_set_N/input_K.pb, output_K.pb)\n"
      "under the given folders on an engine (the reference by default), compares the outputs (dtype and shape exact,\n"
      "|actual-expected| <= atol + rtol*|expected|, NaN equals NaN), prints one line per failing test\n"
      "and a final line `N passed, M failed, K skipped`. Skips follow a documented exclusion list\n"
      "(--list-skips). Exit 0 when nothing failed unexpectedly, 1 otherwise.\n\noptions");
  opts.add_options()("help,h", "show this help")
      ("dir", po::value<std::vector<std::string>>(), "test folders (searched recursively)")
      ("rtol", po::value<double>()->default_value(1e-3), "relative tolerance")
      ("atol", po::value<double>()->default_value(1e-7), "absolute tolerance")
      ("threads", po::value<int>()->default_value(0), "worker threads (0: all cores; at most 1024)")
      ("engine", po::value<std::string>()->default_value("ref"), "engine spec, of one of the kinds below")
      ("known-failures", po::value<std::string>(),
       "file of test names allowed to fail, one per line, each with its reason (a # comment on its line or the "
       "comment block above it); only other failures fail the run")
      ("min-passed", po::value<long>(), "fail the run when fewer tests pass")
      ("list-skips", "print the exclusion list with reasons and exit");
  add_output_options(opts, "also print passing and skipped tests (-q: only the unexpected failures and the counts)");
  opts.add(engine_kinds_group());
  return opts;
}

struct ConformanceTally {
  long passed = 0, failed = 0, skipped = 0, unexpected = 0;
  std::vector<std::string> fixed;  // known failures that pass
};

// Runs the tests, printing failures (quiet: the unexpected ones; verbose: passes and skips too).
ConformanceTally run_tests(const std::vector<fs::path>& tests, Engine& engine, const ConformanceTolerance& tol,
                           const std::map<std::string, std::string>& known, const Console& console) {
  const bool verbose = console.verbose();
  ConformanceTally t;
  for (const auto& dir : tests) {
    const std::string name = dir.filename().string();
    const auto outcome = run_conformance_test(dir, engine, tol);
    switch (outcome.kind) {
      case ConformanceOutcome::Kind::Passed:
        ++t.passed;
        if (known.count(name)) t.fixed.push_back(name);
        if (verbose) std::cout << "PASS " << dir.string() << "\n";
        break;
      case ConformanceOutcome::Kind::Failed:
        ++t.failed;
        if (!known.count(name)) ++t.unexpected;
        else if (console.quiet()) break;
        std::cout << "FAIL " << dir.string() << ": " << outcome.reason;
        if (auto k = known.find(name); k != known.end()) std::cout << " (known: " << k->second << ")";
        std::cout << "\n";
        break;
      case ConformanceOutcome::Kind::Skipped:
        ++t.skipped;
        if (verbose) std::cout << "SKIP " << dir.string() << ": " << outcome.reason << "\n";
        break;
    }
  }
  return t;
}

// The folders named on the command line; each must exist.
Expected<std::vector<fs::path>> conformance_roots(const po::variables_map& vm) {
  std::vector<fs::path> roots;
  for (const auto& d : vm["dir"].as<std::vector<std::string>>()) {
    std::error_code ec;
    if (!fs::exists(d, ec)) return Error{d, "no such folder"};
    roots.emplace_back(d);
  }
  return roots;
}

Expected<std::unique_ptr<Engine>> conformance_engine(const po::variables_map& vm) {
  EngineEnvironment environment;
  environment.threads = vm["threads"].as<int>();
  environment.on_note = console_from(vm).note_sink();
  REDUCE_TRY(check_int_range("--threads", environment.threads, 0, kMaxParallel));
  configure_engine_libraries(environment.threads);  // process-wide: the command's, once
  auto made = make_engine(vm["engine"].as<std::string>(), environment);
  if (!made) return Error{"conformance", made.error().message()};
  return std::move(*made);
}

// Prints the counts; the exit code they give.
int report_tally(const ConformanceTally& tally, bool no_tests, const po::variables_map& vm) {
  const long passed = tally.passed;
  if (!console_from(vm).quiet())
    for (const auto& f : tally.fixed) std::cout << "note: " << f << " is listed as a known failure but passes\n";
  std::cout << passed << " passed, " << tally.failed << " failed, " << tally.skipped << " skipped\n";
  if (no_tests) {
    std::cerr << "error: conformance: no test folders (with model.onnx) found\n";
    return kExitUsage;
  }
  if (tally.unexpected > 0) return kExitFailure;
  if (vm.count("min-passed") && passed < vm["min-passed"].as<long>()) {
    std::cerr << "error: conformance: " << passed << " passed, fewer than --min-passed " << vm["min-passed"].as<long>() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int conformance_command(const std::vector<std::string>& args) {
  const po::options_description opts = conformance_options();
  po::positional_options_description pos;
  pos.add("dir", -1);
  po::variables_map vm;
  if (auto done = parse_command_line(args, "conformance", opts, pos, vm)) return *done;
  if (vm.count("list-skips")) {
    for (const auto& [what, why] : conformance_exclusions()) std::cout << what << ": " << why << "\n";
    return kExitOk;
  }
  if (!vm.count("dir")) {
    std::cerr << "error: conformance: missing DIR (see `reduce conformance --help`)\n";
    return kExitUsage;
  }
  auto usage_error = [](const Error& e) {
    std::cerr << "error: " << e.message() << "\n";
    return kExitUsage;
  };
  auto roots = conformance_roots(vm);
  if (!roots) return usage_error(roots.error());
  std::map<std::string, std::string> known;
  if (vm.count("known-failures")) {
    auto k = read_known_failures(vm["known-failures"].as<std::string>());
    if (!k) return usage_error(k.error());
    known = std::move(*k);
  }
  auto engine = conformance_engine(vm);
  if (!engine) return usage_error(engine.error());
  const ConformanceTolerance tol{vm["rtol"].as<double>(), vm["atol"].as<double>()};
  const auto tests = find_conformance_tests(*roots);
  const ConformanceTally tally = run_tests(tests, **engine, tol, known, console_from(vm));
  return report_tally(tally, tests.empty(), vm);
}

}  // namespace reduce::cli
