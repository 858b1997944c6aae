// The corpus end to end: `reduce check` reports every model's manifest kind (and passes on `opt`
// without faults), `reduce batch` reaches every ground-truth reproducer, 1-minimal, and Ctrl-C
// leaves a bundle that still fails.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "process_support.h"
#include "tsv_rows.h"

namespace reduce {
namespace {

using testing::read_bytes;
using testing::run_process;
using testing::run_reduce;
using testing::TempDir;

struct Row {
  std::string model, engine, kind, ops;
};

std::vector<Row> read_manifest(const std::filesystem::path& path) {
  std::vector<Row> rows;
  for (const auto& cols : testing::read_tsv(path).rows)
    if (cols.size() >= 4) rows.push_back({cols[0], cols[1], cols[2], cols[3]});
  return rows;
}

// Generated once for the whole suite: sizes 10 and 100.
class Corpus : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    auto r = run_process({std::string(REDUCE_BINARY_DIR) + "/reduce-corpus", (dir_->path() / "corpus").string(), "--sizes", "10,100"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    rows_ = read_manifest(dir_->path() / "corpus" / "manifest.tsv");
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::filesystem::path corpus() { return dir_->path() / "corpus"; }
  static inline TempDir* dir_ = nullptr;
  static inline std::vector<Row> rows_;
};

TEST_F(Corpus, CheckReportsTheManifestKindAndPassesWithoutTheFault) {
  ASSERT_GE(rows_.size(), 16u);
  for (const auto& row : rows_) {
    const std::string model = (corpus() / row.model).string();
    auto fails = run_reduce({"check", model, "--engine", row.engine});
    EXPECT_EQ(fails.exit_code, 1) << row.model << ": " << fails.out << fails.err;
    EXPECT_NE(fails.out.find("verdict: FAIL (" + row.kind + ")"), std::string::npos) << row.model << ": " << fails.out;
    auto passes = run_reduce({"check", model, "--engine", "opt"});
    EXPECT_EQ(passes.exit_code, 0) << row.model << ": " << passes.out << passes.err;
  }
}

TEST_F(Corpus, BatchReachesEveryGroundTruthReproducer) {
  const auto out = dir_->path() / "batch";
  auto r = run_reduce({"batch", corpus().string(), "-o", out.string(), "-j", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string summary = read_bytes(out / "summary.json");
  size_t reached = 0, pos = 0;
  while ((pos = summary.find("\"reached_expected\": true", pos)) != std::string::npos) ++reached, ++pos;
  EXPECT_EQ(reached, rows_.size()) << read_bytes(out / "summary.md");
  size_t minimal = 0;
  pos = 0;
  while ((pos = summary.find("\"one_minimal\": true", pos)) != std::string::npos) ++minimal, ++pos;
  EXPECT_EQ(minimal, rows_.size());
  for (const auto& row : rows_) {
    const auto stem = std::filesystem::path(row.model).stem();
    const std::string report = read_bytes(out / stem / "report.json");
    EXPECT_NE(report.find("\"kind\": \"" + row.kind + "\""), std::string::npos) << row.model;
  }
  // A second run skips everything (resumable) and writes the same summary.
  auto again = run_reduce({"batch", corpus().string(), "-o", out.string(), "-j", "2"});
  ASSERT_EQ(again.exit_code, 0);
  EXPECT_NE(again.out.find("0 reduced now"), std::string::npos) << again.out;
}

TEST_F(Corpus, SameReproducerBytesForEveryJobCountAndRun) {
  for (const auto& row : rows_) {
    if (row.model.find("_100.onnx") == std::string::npos || row.model.find("layernorm") == std::string::npos) continue;
    std::string first;
    for (const char* jobs : {"1", "2", "2"}) {
      const auto out = dir_->path() / ("det-" + std::string(jobs) + std::to_string(first.size()));
      auto r = run_reduce({(corpus() / row.model).string(), "--engine", row.engine, "-j", jobs, "-o", out.string()});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const std::string bytes = read_bytes(out / "model.onnx");
      if (first.empty()) first = bytes;
      EXPECT_EQ(bytes, first) << "-j " << jobs;
    }
  }
}

// The op types of the reduced model in a bundle's report.json: its "op_types" object without spaces.
std::string reduced_op_types(const std::string& report) {
  const size_t reduced = report.find("\"reduced\"");
  const size_t begin = report.find('{', report.find("\"op_types\"", reduced));
  const size_t end = report.find('}', begin);
  if (reduced == std::string::npos || begin == std::string::npos || end == std::string::npos) return "";
  std::string ops = report.substr(begin, end - begin + 1);
  std::erase_if(ops, [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  return ops;
}

// report.json `rounds`: at -j 1 every engine run waits for the one before (an engine in this process
// runs candidates only after the original's verdict), so the rounds are the engine runs. With 8
// slots the probes run beside the original's check, the search's runs beside each other and the
// bundle's first run beside certify: fewer rounds, the same reproducer. report.md says them.
TEST_F(Corpus, RoundsAreTheEngineRunsAtOneJobAndFewerWithSlots) {
  size_t tried = 0;
  for (const auto& row : rows_) {
    if (row.model.find("_100.onnx") == std::string::npos) continue;
    ++tried;
    std::map<std::string, nlohmann::json> reports;
    std::map<std::string, std::string> models;
    for (const char* jobs : {"1", "8"}) {
      const auto out = dir_->path() / ("rounds-" + std::string(jobs) + "-" + row.model);
      auto r = run_reduce({(corpus() / row.model).string(), "--engine", row.engine, "-j", jobs, "-o", out.string()});
      ASSERT_TRUE(testing::bundle_written(r)) << row.model << ": " << r.err;
      reports[jobs] = nlohmann::json::parse(read_bytes(out / "report.json"));
      models[jobs] = read_bytes(out / "model.onnx");
      const auto runs = reports[jobs].at("engine_runs").get<int>(), rounds = reports[jobs].at("rounds").get<int>();
      EXPECT_NE(read_bytes(out / "report.md").find(std::to_string(runs) + " engine runs in " + std::to_string(rounds) + " rounds"),
                std::string::npos) << row.model;
    }
    const int one = reports["1"].at("rounds").get<int>(), eight = reports["8"].at("rounds").get<int>();
    std::printf("[ counts ] %s: rounds %d at -j 1, %d at -j 8 (%d engine runs)\n", row.model.c_str(), one, eight,
                reports["8"].at("engine_runs").get<int>());
    EXPECT_EQ(one, reports["1"].at("engine_runs").get<int>()) << row.model;
    EXPECT_LT(eight, one) << row.model;
    EXPECT_EQ(models["8"], models["1"]) << row.model << ": the same reproducer";
  }
  EXPECT_GT(tried, 0u);
}

// The family on the standard Attention op (opset 23): the optimized engine runs every Attention as
// its fused kernel, and the trigger's alone, fed its recorded inputs, is the whole reproducer.
// --max-engine-runs N: the search starts no check once the engine ran N times (-j 1: never more),
// the best reproducer so far is written, checked again (one more run), still failing, and said to
// be not certified; without the budget the same model goes on to a certified reproducer. N is one
// run short of what the search takes without it (report.json engine_runs_by_purpose.search).
TEST_F(Corpus, MaxEngineRunsStopsWithTheBestReproducerSoFarNotCertified) {
  size_t tried = 0;
  for (const auto& row : rows_) {
    if (row.model.find("_100.onnx") == std::string::npos || row.kind != "mismatch") continue;
    ++tried;
    const auto free = dir_->path() / ("free-" + row.model);
    auto unbudgeted = run_reduce({(corpus() / row.model).string(), "--engine", row.engine, "-j", "1", "-q", "-o", free.string()});
    ASSERT_EQ(unbudgeted.exit_code, 0) << row.model << ": " << unbudgeted.out << unbudgeted.err;
    const auto full = nlohmann::json::parse(read_bytes(free / "report.json"));
    EXPECT_TRUE(full.at("one_minimal").get<bool>());
    const int budget = full.at("engine_runs_by_purpose").at("search").get<int>() - 1;
    const auto out = dir_->path() / ("budget-" + row.model);
    auto r = run_reduce({(corpus() / row.model).string(), "--engine", row.engine, "-j", "1", "--max-engine-runs",
                         std::to_string(budget), "-o", out.string()});
    ASSERT_EQ(r.exit_code, 0) << row.model << ": " << r.out << r.err;
    EXPECT_NE(r.out.find("engine-run budget of " + std::to_string(budget) + " reached (not certified 1-minimal)"),
              std::string::npos) << r.out;
    const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
    EXPECT_EQ(report.at("engine_run_budget").at("max"), budget);
    EXPECT_TRUE(report.at("engine_run_budget").at("reached").get<bool>());
    EXPECT_FALSE(report.at("one_minimal").get<bool>());
    EXPECT_LE(report.at("engine_runs_by_purpose").at("search").get<int>(), budget) << row.model;
    EXPECT_NE(read_bytes(out / "report.md").find("**Engine-run budget reached**"), std::string::npos);
    auto again = run_reduce({"check", (out / "model.onnx").string(), "--engine", row.engine, "--inputs",
                             (out / "inputs").string()});
    EXPECT_EQ(again.exit_code, 1) << row.model << ": the reproducer still fails\n" << again.out;
  }
  EXPECT_GT(tried, 0u);
  auto bad = run_reduce({(corpus() / rows_.at(0).model).string(), "--engine", rows_.at(0).engine, "--max-engine-runs", "-1",
                         "-o", (dir_->path() / "never").string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "error: --max-engine-runs: must be 0 (no limit) or a positive number of runs, not -1\n");
  EXPECT_FALSE(std::filesystem::exists(dir_->path() / "never"));
}

// --simplify-runs N (default 0): the simplification passes spend at most N engine runs; the node
// set is the one an unlimited run finds, still certified 1-minimal, in fewer engine runs.
TEST_F(Corpus, SimplificationsSpendAtMostTheirRunsAndTheReproducerIsStillCertified) {
  size_t bounded_somewhere = 0;
  for (const auto& row : rows_) {
    if (row.model.find("_100.onnx") == std::string::npos) continue;
    const auto out = dir_->path() / ("simplify-" + row.model), all = dir_->path() / ("simplify-all-" + row.model);
    auto r = run_reduce({(corpus() / row.model).string(), "--engine", row.engine, "-j", "1", "-o", out.string()});
    ASSERT_TRUE(testing::bundle_written(r)) << row.model << ": " << r.out << r.err;
    auto u = run_reduce({(corpus() / row.model).string(), "--engine", row.engine, "-j", "1", "--simplify-runs", "all", "-o",
                         all.string()});
    ASSERT_TRUE(testing::bundle_written(u)) << row.model << ": " << u.out << u.err;
    const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
    const auto unlimited = nlohmann::json::parse(read_bytes(all / "report.json"));
    EXPECT_EQ(report.at("simplification").at("max_runs"), 0) << row.model;
    EXPECT_EQ(report.at("simplification").at("runs").get<int>(), 0) << row.model;
    EXPECT_TRUE(unlimited.at("simplification").at("max_runs").is_null());
    EXPECT_FALSE(unlimited.at("simplification").at("budget_reached").get<bool>());
    EXPECT_TRUE(report.at("one_minimal").get<bool>()) << row.model;
    EXPECT_EQ(report.at("reduced").at("nodes"), unlimited.at("reduced").at("nodes")) << row.model;
    EXPECT_LE(report.at("engine_runs").get<int>(), unlimited.at("engine_runs").get<int>()) << row.model;
    if (report.at("simplification").at("budget_reached").get<bool>()) {
      ++bounded_somewhere;
      EXPECT_NE(read_bytes(out / "report.md").find("**Not simplified** (`--simplify-runs 0`, the default)"), std::string::npos);
      EXPECT_NE(r.out.find("not simplified (--simplify-runs 0, the default: "), std::string::npos) << r.out;
      EXPECT_LT(report.at("engine_runs").get<int>(), unlimited.at("engine_runs").get<int>()) << row.model;
    }
  }
  EXPECT_GT(bounded_somewhere, 0u);
  for (const char* bad : {"-1", "x", "1.5", ""}) {
    auto b = run_reduce({(corpus() / rows_.at(0).model).string(), "--engine", rows_.at(0).engine, "--simplify-runs", bad, "-o",
                         (dir_->path() / "never").string()});
    EXPECT_EQ(b.exit_code, 2) << bad;
    EXPECT_EQ(b.err, std::string("error: --simplify-runs: a number of engine runs (0 or more) or `all`, not '") + bad + "'\n");
    EXPECT_FALSE(std::filesystem::exists(dir_->path() / "never"));
  }
}

// Time to a first small reproducer: the journal stamps every candidate written (nodes, seconds,
// engine runs) and the report names the first within twice the final size, never after the end.
TEST_F(Corpus, TheReportSaysWhenTheFirstSmallReproducerWasWritten) {
  const auto row = std::find_if(rows_.begin(), rows_.end(), [](const Row& r) { return r.model.find("_100.onnx") != std::string::npos; });
  ASSERT_NE(row, rows_.end());
  const auto out = dir_->path() / ("first-small-" + row->model);
  auto r = run_reduce({(corpus() / row->model).string(), "--engine", row->engine, "-j", "1", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
  const auto& first = report.at("first_small_reproducer");
  ASSERT_TRUE(first.is_object()) << report.dump(2);
  const int final_nodes = report.at("reduced").at("nodes").get<int>();
  EXPECT_LE(first.at("nodes").get<int>(), 2 * final_nodes);
  EXPECT_GE(first.at("nodes").get<int>(), final_nodes);
  EXPECT_LE(first.at("engine_runs").get<int>(), report.at("engine_runs").get<int>());
  EXPECT_NE(r.out.find("first reproducer within 2x of the final size: " + std::to_string(first.at("nodes").get<int>()) +
                       " nodes after " + std::to_string(first.at("engine_runs").get<int>()) + " engine runs\n"),
            std::string::npos)
      << r.out;
  // The journal's stamps: sizes never grow, runs never fall, and one of them is the reported one.
  std::istringstream journal(read_bytes(out / "journal"));
  int last_nodes = INT32_MAX, last_runs = 0;
  bool found = false;
  for (std::string line; std::getline(journal, line);) {
    const auto record = nlohmann::json::parse(line);
    EXPECT_LE(record.at("nodes").get<int>(), last_nodes);
    EXPECT_GE(record.at("engine_runs").get<int>(), last_runs);
    last_nodes = record.at("nodes").get<int>();
    last_runs = record.at("engine_runs").get<int>();
    found |= record.at("nodes") == first.at("nodes") && record.at("engine_runs") == first.at("engine_runs");
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(last_nodes, final_nodes);
}

TEST_F(Corpus, TheStandardAttentionFamilyReducesToItsAttentionNodeAloneForEveryJobCount) {
  size_t reduced = 0;
  for (const auto& row : rows_) {
    if (row.model.rfind("attention_op_transformer_", 0) != 0) continue;
    EXPECT_EQ(row.ops, "Attention:1") << row.model;
    std::string first;
    for (const char* jobs : {"1", "2"}) {
      const auto out = dir_->path() / ("attention-op-" + row.model + "-j" + jobs);
      auto r = run_reduce({(corpus() / row.model).string(), "--engine", row.engine, "-j", jobs, "-o", out.string()});
      ASSERT_TRUE(testing::bundle_written(r)) << row.model << ": " << r.err;
      const std::string report = read_bytes(out / "report.json");
      EXPECT_NE(report.find("\"one_minimal\": true"), std::string::npos) << row.model << " -j " << jobs;
      EXPECT_NE(report.find("\"kind\": \"nonfinite\""), std::string::npos) << row.model << " -j " << jobs;
      EXPECT_EQ(reduced_op_types(report), "{\"Attention\":1}") << row.model << " -j " << jobs;
      const std::string bytes = read_bytes(out / "model.onnx");
      if (first.empty()) first = bytes;
      EXPECT_EQ(bytes, first) << row.model << " -j " << jobs;
    }
    ++reduced;
  }
  EXPECT_EQ(reduced, 2u);  // sizes 10 and 100
}

// Processes other than the test itself whose command line mentions `text` (a bundle folder that
// `dot` or an engine would be given): none may outlive the reduction that started them.
std::vector<std::string> processes_mentioning(const std::string& text) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid == std::to_string(getpid())) continue;
    std::string cmdline = read_bytes(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(text) != std::string::npos) found.push_back(pid + ": " + cmdline);
  }
  return found;
}

// A moment of a 10 000-node reduction at which Ctrl-C arrives.
struct Moment {
  const char* name;
  int journal_lines;  // interrupt once the journal has this many lines; 0: after `delay`
  std::chrono::milliseconds delay;
  bool at_start_up = false;  // as soon as the process runs its own code (libraries initializing)
};

// Whether the process blocks SIGINT: `reduce` does from its first instruction after the dynamic
// loader, so this is the earliest moment at which it can answer a signal.
bool blocks_sigint(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("SigBlk:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) & (1ull << (SIGINT - 1))) != 0;
  return false;
}

// Names the moment in test listings (CTest shows a parameter's printed value).
void PrintTo(const Moment& moment, std::ostream* os) { *os << moment.name; }

class InterruptAt : public ::testing::TestWithParam<Moment> {};

// Ctrl-C at any moment of a 10 000-node reduction (loading and recording, the original's check,
// the first improvement, the second): exit 130, no process left that the reduction started, and either
// a bundle whose reproducer still fails the same way, or "nothing written" and no bundle.
TEST_P(InterruptAt, ExitsWithABundleThatStillFailsOrNothingWritten) {
  const Moment moment = GetParam();
  TempDir big;
  auto gen = run_process({std::string(REDUCE_BINARY_DIR) + "/reduce-corpus", big.path().string(), "--sizes", "10000",
                          "--faults", "attention-unstable-softmax"});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const auto rows = read_manifest(big.path() / "manifest.tsv");
  ASSERT_EQ(rows.size(), 1u);
  const auto out = big.path() / "bundle";
  const auto err = big.path() / "reduce.err";
  const std::string model = (big.path() / rows[0].model).string();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string bin = std::string(REDUCE_BINARY_DIR) + "/reduce";
    // ddmin with one job is the slowest strategy: the late moments come before it ends.
    if (!freopen("/dev/null", "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(127);
    execl(bin.c_str(), bin.c_str(), model.c_str(), "--engine", rows[0].engine.c_str(), "-j", "1", "-o", out.c_str(),
          "--strategy", "ddmin", static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  const auto reached = [&] {
    if (moment.journal_lines == 0) return true;
    const std::string journal = read_bytes(out / "journal");
    return std::count(journal.begin(), journal.end(), '\n') >= moment.journal_lines;
  };
  while (moment.at_start_up && !blocks_sigint(pid) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  std::this_thread::sleep_for(moment.delay);
  while (!reached() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto sent = std::chrono::steady_clock::now();
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  // Reported, not asserted (a loaded CI machine under the sanitizers is slower): bench/interrupt.sh
  // measures it on a release build.
  RecordProperty("exit_ms", static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                 std::chrono::steady_clock::now() - sent).count()));
  ASSERT_TRUE(WIFEXITED(status)) << "reduce died from a signal";
  EXPECT_EQ(WEXITSTATUS(status), 130) << "the reduction ended before the interrupt: " << read_bytes(err);
  EXPECT_EQ(processes_mentioning(big.path().string()), std::vector<std::string>{});
  const std::string said = read_bytes(err);
  if (!std::filesystem::exists(out / "report.json")) {
    // "interrupted; nothing written", or "interrupted before the original model's check ended; nothing
    // written" when Ctrl-C comes while the original is still being checked (a slow machine).
    EXPECT_NE(said.find("reduce: interrupted"), std::string::npos) << said;
    EXPECT_NE(said.find("; nothing written"), std::string::npos) << said;
    EXPECT_FALSE(std::filesystem::exists(out / "model.onnx"));
    EXPECT_EQ(moment.journal_lines, 0) << "a journal line was written, so was the bundle";
    return;
  }
  EXPECT_NE(read_bytes(out / "report.json").find("\"interrupted\": true"), std::string::npos);
  for (const char* file : {"model.onnx", "journal", "report.md", "bucket.txt"})
    EXPECT_TRUE(std::filesystem::exists(out / file)) << file;
  auto check = run_reduce({"check", (out / "model.onnx").string(), "--engine", rows[0].engine, "--inputs", (out / "inputs").string()});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE(check.out.find("FAIL (" + rows[0].kind + ")"), std::string::npos) << check.out;
}

INSTANTIATE_TEST_SUITE_P(Corpus10000, InterruptAt,
                         ::testing::Values(Moment{"AtStartUp", 0, std::chrono::milliseconds(0), true},
                                           Moment{"WhileRecordingOrChecking", 0, std::chrono::milliseconds(2500)},
                                           Moment{"AtTheFirstImprovement", 2, std::chrono::milliseconds(0)},
                                           Moment{"AfterTwoImprovements", 3, std::chrono::milliseconds(0)}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace reduce
