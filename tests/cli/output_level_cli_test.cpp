// Issue 68, -q and -v on every command: -q leaves the answer (stdout), warnings and errors; -v adds
// one line per engine run (or the command's own detail); both at once is a usage error.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "process_support.h"

namespace reduce {
namespace {

using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

namespace fs = std::filesystem;

const std::string kExamples = std::string(REDUCE_SOURCE_DIR) + "/corpus/examples/";
const std::string kBroadcast = kExamples + "broadcast_batch1_cnn_50.onnx";
const std::string kBroadcastEngine = "opt:fault=broadcast-batch1";

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

size_t count_lines_starting(const std::string& text, const std::string& start) {
  size_t n = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    n += text.compare(at, start.size(), start) == 0;
    at = end + 1;
  }
  return n;
}

const std::vector<std::string> kCommands = {"check", "compare", "run", "info", "convert", "precision", "reduce", "batch",
                                            "conformance"};

TEST(OutputLevel, EveryCommandTakesQuietAndVerboseButNotBoth) {
  for (const auto& command : kCommands) {
    auto help = run_reduce({"help", command});
    ASSERT_EQ(help.exit_code, 0) << command << help.err;
    EXPECT_TRUE(has(help.out, "-q [ --quiet ]")) << command;
    EXPECT_TRUE(has(help.out, "-v [ --verbose ]")) << command;
    std::vector<std::string> args;
    if (command != "reduce") args.push_back(command);
    args.insert(args.end(), {kBroadcast, "-q", "-v"});
    auto both = run_reduce(args);
    EXPECT_EQ(both.exit_code, 2) << command << both.err;
    EXPECT_EQ(both.err, "error: " + command + ": -q (--quiet) and -v (--verbose) cannot be given together\n") << command;
    EXPECT_EQ(both.out, "") << command;
  }
}

TEST(OutputLevel, QuietCheckPrintsTheVerdictAlone) {
  auto normal = run_reduce({"check", kBroadcast, "--engine", kBroadcastEngine});
  auto quiet = run_reduce({"check", kBroadcast, "--engine", kBroadcastEngine, "-q"});
  EXPECT_EQ(quiet.exit_code, normal.exit_code);
  EXPECT_EQ(quiet.exit_code, 1) << quiet.err;
  EXPECT_EQ(quiet.err, "");
  EXPECT_EQ(quiet.out.rfind("verdict: FAIL (mismatch)\n", 0), 0u) << quiet.out;
  EXPECT_FALSE(has(quiet.out, "inputs: random")) << quiet.out;
  // The answer itself is what the default prints after its header.
  EXPECT_EQ(normal.out.substr(normal.out.find("verdict:")), quiet.out);
}

TEST(OutputLevel, QuietReduceSaysNothingOnStderrAndTheSameAnswer) {
  TempDir dir;
  auto r = run_reduce({kBroadcast, "--engine", kBroadcastEngine, "-o", (dir / "b").string(), "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(has(r.out, "reduced 50 -> 1 nodes (Mul x1), 1-minimal")) << r.out;
  EXPECT_TRUE(fs::exists(dir / "b" / "report.json"));
}

TEST(OutputLevel, VerboseCheckSaysEachEngineRun) {
  auto r = run_reduce({"check", kBroadcast, "--engine", kBroadcastEngine, "-v", "--confirm", "3"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // The model's run and two confirmations, each on the 50 nodes.
  EXPECT_EQ(count_lines_starting(r.err, "engine run: 50 nodes, "), 3u) << r.err;
  EXPECT_EQ(count_lines_starting(r.err, "engine run: "), 3u) << r.err;
  EXPECT_TRUE(has(r.err, "ms: FAIL (mismatch: error up to")) << r.err;
  auto normal = run_reduce({"check", kBroadcast, "--engine", kBroadcastEngine, "--confirm", "3"});
  EXPECT_EQ(count_lines_starting(normal.err, "engine run: "), 0u) << normal.err;
}

TEST(OutputLevel, VerboseReduceSaysAtLeastEveryEngineRunItCounts) {
  TempDir dir;
  auto r = run_reduce({kBroadcast, "--engine", kBroadcastEngine, "-o", (dir / "b").string(), "-v", "-j", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(dir / "b" / "report.json");
  const auto report = nlohmann::json::parse(in);
  const size_t runs = count_lines_starting(r.err, "engine run: ");
  EXPECT_GE(runs, report["engine_runs"].get<size_t>()) << r.err;
  EXPECT_GT(count_lines_starting(r.err, "check: "), 0u) << r.err;
}

// Issue 71: report.json's engine work is the sum, over every run of the engine, of the nodes it was
// given: the same runs -v lists one by one.
TEST(OutputLevel, EngineRunLinesAddUpToTheReportedEngineWork) {
  TempDir dir;
  auto r = run_reduce({kBroadcast, "--engine", kBroadcastEngine, "-o", (dir / "b").string(), "-v", "-j", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  uint64_t nodes = 0;
  for (size_t at = r.err.find("engine run: "); at != std::string::npos; at = r.err.find("engine run: ", at + 1))
    nodes += std::stoull(r.err.substr(at + 12));
  std::ifstream in(dir / "b" / "report.json");
  const auto report = nlohmann::json::parse(in);
  const auto& work = report["engine_work"];
  EXPECT_EQ(work["nodes"].get<uint64_t>(), nodes) << r.err;
  EXPECT_GT(work["weight_bytes"].get<uint64_t>(), 0u);
  EXPECT_LE(work["search_nodes"].get<uint64_t>(), work["nodes"].get<uint64_t>());
  EXPECT_DOUBLE_EQ(work["x_model_nodes"].get<double>(), static_cast<double>(nodes) / 50.0);
}

TEST(OutputLevel, VerboseRunTimesEveryRun) {
  auto r = run_reduce({"run", kBroadcast, "--repeat", "3", "-v"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines_starting(r.err, "prepare: "), 1u) << r.err;
  for (const char* run : {"run 1: ", "run 2: ", "run 3: "}) EXPECT_EQ(count_lines_starting(r.err, run), 1u) << r.err;
  auto quiet = run_reduce({"run", kBroadcast, "--repeat", "3", "-q"});
  EXPECT_EQ(quiet.err, "");
  EXPECT_TRUE(has(quiet.out, "per run (3 runs)")) << quiet.out;
}

TEST(OutputLevel, VerboseInfoListsEveryNode) {
  const std::string model = kExamples + "tiny_attention.onnx";
  auto r = run_reduce({"info", model, "-v"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "node list:\n  #0 ")) << r.out;
  EXPECT_EQ(count_lines_starting(r.out, "  #"), 18u) << r.out;
  auto json = run_reduce({"info", model, "-v", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  ASSERT_EQ(doc["node_list"].size(), 18u);
  EXPECT_TRUE(doc["node_list"][0].contains("op_type"));
  auto plain = run_reduce({"info", model});
  EXPECT_FALSE(has(plain.out, "node list:")) << plain.out;
}

TEST(OutputLevel, QuietBatchHasNoRowLinesAndItsReductionsAreQuiet) {
  TempDir dir;
  write_bytes(dir / "manifest.tsv", "model\tengine\n" + kBroadcast + "\t" + kBroadcastEngine + "\n");
  auto r = run_reduce({"batch", (dir / "manifest.tsv").string(), "-o", (dir / "out").string(), "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(has(r.out, "1 models")) << r.out;
  EXPECT_TRUE(fs::exists(dir / "out" / "broadcast_batch1_cnn_50" / "report.json"));
}

}  // namespace
}  // namespace reduce
