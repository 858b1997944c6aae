// The corpus end to end: `reduce check` reports every model's manifest kind (and passes on `opt`
// without faults), `reduce batch` reaches every ground-truth reproducer, 1-minimal, and Ctrl-C
// leaves a bundle that still fails.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "process_support.h"

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
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream l(line);
    for (std::string c; std::getline(l, c, '\t');) cols.push_back(c);
    if (cols.size() >= 4) rows.push_back({cols[0], cols[1], cols[2], cols[3]});
  }
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

TEST_F(Corpus, InterruptLeavesABundleThatStillFails) {
  // The 10 000-node transformer takes seconds to reduce with ddmin: interrupt it after its first improvement.
  TempDir big;
  auto gen = run_process({std::string(REDUCE_BINARY_DIR) + "/reduce-corpus", big.path().string(), "--sizes", "10000",
                          "--faults", "attention-unstable-softmax"});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const auto rows = read_manifest(big.path() / "manifest.tsv");
  ASSERT_EQ(rows.size(), 1u);
  const auto out = big.path() / "bundle";
  const std::string model = (big.path() / rows[0].model).string();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string bin = std::string(REDUCE_BINARY_DIR) + "/reduce";
    // Output discarded; ddmin with one job is the slowest strategy.
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execl(bin.c_str(), bin.c_str(), model.c_str(), "--engine", rows[0].engine.c_str(), "-j", "1", "-o", out.c_str(),
          "--strategy", "ddmin", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for the first improvement (the journal's second line: the first is the start), then interrupt.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const auto improved = [&] {
    const std::string journal = read_bytes(out / "journal");
    return std::count(journal.begin(), journal.end(), '\n') >= 2;
  };
  while (!improved() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "reduce died from a signal";
  EXPECT_EQ(WEXITSTATUS(status), 130) << "the reduction ended before the interrupt";
  EXPECT_NE(read_bytes(out / "report.json").find("\"interrupted\": true"), std::string::npos);
  ASSERT_TRUE(std::filesystem::exists(out / "model.onnx"));
  auto check = run_reduce({"check", (out / "model.onnx").string(), "--engine", rows[0].engine, "--inputs", (out / "inputs").string()});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE(check.out.find("FAIL (" + rows[0].kind + ")"), std::string::npos) << check.out;
}

}  // namespace
}  // namespace reduce
