// `reduce check`, `reduce compare` and `reduce MODEL.onnx` end to end, on the optimized engine's faults.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

using testing::read_bytes;
using testing::run_reduce;
using testing::TempDir;
using testing::kBroadcastChain;
using testing::write_bytes;

// An attention block whose scaled logits exceed 88 (inputs in [3,4), scale 4).
const char* kAttention = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,4,8] Q, float[1,8,4] K, float[1,4,8] V) => (float[1,4,8] Y)
<float Scale = {4.0}>
{
  q = Relu(Q)
  scores = MatMul(q, K)
  scaled = Mul(scores, Scale)
  probs = Softmax <axis = -1> (scaled)
  att = MatMul(probs, V)
  Y = Tanh(att)
}
)";

std::string write_model(const TempDir& dir, const std::string& name, const char* text) {
  write_bytes(dir / name, text);
  return (dir / name).string();
}

TEST(CheckCli, ExitCodeSaysWhetherTheModelFails) {
  TempDir dir;
  const auto model = write_model(dir, "bb.onnxtxt", kBroadcastChain);
  auto fails = run_reduce({"check", model, "--engine", "opt:fault=broadcast-batch1"});
  EXPECT_EQ(fails.exit_code, 1) << fails.err;
  EXPECT_NE(fails.out.find("verdict: FAIL (mismatch)"), std::string::npos) << fails.out;
  auto passes = run_reduce({"check", model, "--engine", "opt"});
  EXPECT_EQ(passes.exit_code, 0) << passes.out << passes.err;
  EXPECT_NE(passes.out.find("verdict: PASS"), std::string::npos);
}

TEST(CheckCli, NonFiniteIsItsOwnKind) {
  TempDir dir;
  const auto model = write_model(dir, "att.onnxtxt", kAttention);
  auto r = run_reduce({"check", model, "--engine", "opt:fault=attention-unstable-softmax", "--input-range", "Q:3,4",
                       "--input-range", "K:3,4"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL (nonfinite)"), std::string::npos) << r.out;
}

// The engine: `reduce run` on another model, whose output has twice the columns of this one's.
TEST(CheckCli, AnOutputOfAnotherShapeIsAShapeFailureNamedWithBothShapes) {
  TempDir dir;
  const auto model = write_model(dir, "relu.onnxtxt", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 3] X) => (float[1, 3] Y)
{
  Y = Relu(X)
}
)");
  const auto doubled = write_model(dir, "doubled.onnxtxt", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 3] X) => (float[1, 6] Y)
{
  Y = Concat <axis = 1> (X, X)
}
)");
  const std::string engine = "cmd:" + std::string(REDUCE_BINARY_DIR) + "/reduce run " + doubled +
                             " --inputs {inputs} --save-outputs {outputs}";
  auto r = run_reduce({"check", model, "--engine", engine});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: FAIL (shape)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("signature: shape: output `Y` is float[1,6] on the engine, float[1,3] on the reference"),
            std::string::npos) << r.out;
}

TEST(CheckCli, ErrorsAreNormalizedInTheSignature) {
  TempDir dir;
  const auto model = write_model(dir, "cast.onnxtxt", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4] X) => (float[4] Y)
{
  a = Relu(X)
  Y = Cast <to = 1> (a)
}
)");
  auto r = run_reduce({"check", model, "--engine", "opt:fp16,fault=cast-fp16-conflict"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("signature: error: Cast layer <name>: output type conflicts with precision constraint"),
            std::string::npos) << r.out;
}

TEST(CheckCli, ConfirmRerunsTheFailure) {
  TempDir dir;
  const auto model = write_model(dir, "bb.onnxtxt", kBroadcastChain);
  auto r = run_reduce({"check", model, "--engine", "opt:fault=broadcast-batch1", "--confirm", "3"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("confirmed: 3 of 3 runs"), std::string::npos) << r.out;
}

TEST(CheckCli, ConfirmRunsTheEngineAgainAndCallsAFailureSeenOnceFlaky) {
  TempDir dir;
  const auto model = write_model(dir, "bb.onnxtxt", kBroadcastChain);
  // A check: script that fails on its first run only, and counts its runs.
  const auto count = dir.path() / "runs";
  const auto script = dir.path() / "once.sh";
  {
    std::ofstream out(script);
    out << "#!/bin/sh\nn=$(cat '" << count.string() << "' 2>/dev/null || echo 0)\necho $((n + 1)) > '" << count.string()
        << "'\n[ \"$n\" -eq 0 ] && { echo 'engine failed'; exit 1; }\nexit 0\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  auto r = run_reduce({"check", model, "--engine", "check:" + script.string() + " {model}", "--confirm", "3"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FLAKY: 1 of 3 runs"), std::string::npos) << r.out;
  std::ifstream runs(count);
  int n = 0;
  runs >> n;
  EXPECT_EQ(n, 3);  // every confirmation ran the script
}

TEST(CheckCli, DiagnosesInputsBoundInAnotherOrder) {
  TempDir dir;
  const auto model = write_model(dir, "two.onnxtxt", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] zeta, float[2,3] alpha) => (float[2,3] Y)
{
  Y = Sub(zeta, alpha)
}
)");
  auto r = run_reduce({"check", model, "--engine", "opt:fault=input-binding-order"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("engine binds inputs in a different order than declared"), std::string::npos) << r.out;
}

TEST(CheckCli, BadUsageAndInputExitWithTwo) {
  TempDir dir;
  const auto model = write_model(dir, "bb.onnxtxt", kBroadcastChain);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"check", (dir / "missing.onnx").string(), "--engine", "opt"},
           {"check", model, "--engine", "nonsense"},
           {"check", model, "--engine", "opt:fault=no-such-fault"},
           {"check", model, "--atol", "-1"},
           {"check", model, "--check-error-stat", "p99"},
           {"check", model, "--fail-regex", "("},
       }) {
    auto r = run_reduce(args);
    EXPECT_EQ(r.exit_code, 2) << args[1] << " " << args.back() << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("error: "), std::string::npos);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(CompareCli, FindsTheFirstDivergingNode) {
  TempDir dir;
  const auto model = write_model(dir, "bb.onnxtxt", kBroadcastChain);
  auto r = run_reduce({"compare", model, "--engine", "opt:fault=broadcast-batch1"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("first diverging node: (unnamed) (Mul), value 'c'"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("fusion-dependent"), std::string::npos);
}

TEST(CompareCli, WarnsWhenMarkingOutputsHidesAFusedFailure) {
  TempDir dir;
  const auto model = write_model(dir, "att.onnxtxt", kAttention);
  auto r = run_reduce({"compare", model, "--engine", "opt:fault=attention-unstable-softmax", "--input-range", "Q:3,4",
                       "--input-range", "K:3,4"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("fusion-dependent"), std::string::npos) << r.out;
}

TEST(ReduceCli, WritesABundleWithTheMinimalReproducer) {
  TempDir dir;
  const auto model = write_model(dir, "bb.onnxtxt", kBroadcastChain);
  const auto out = dir / "bundle";
  auto r = run_reduce({model, "--engine", "opt:fault=broadcast-batch1", "-j", "2", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* f : {"model.onnx", "inputs/input_0.pb", "expected/output_0.pb", "actual/output_0.pb", "report.json",
                        "report.md", "journal"})
    EXPECT_TRUE(std::filesystem::exists(out / f)) << f;
  const std::string report = read_bytes(out / "report.json");
  for (const char* key : {"\"original\"", "\"reduced\"", "\"op_types\"", "\"Mul\": 1", "\"kind\": \"mismatch\"",
                          "\"checks\"", "\"cache_hits\"", "\"seconds\"", "\"one_minimal\": true", "\"engine\"",
                          "\"reference\""})
    EXPECT_NE(report.find(key), std::string::npos) << key << "\n" << report;
  // The bundle's model still fails, on its own inputs.
  auto check = run_reduce({"check", (out / "model.onnx").string(), "--engine", "opt:fault=broadcast-batch1", "--inputs",
                           (out / "inputs").string()});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
}

TEST(ReduceCli, SameBundleForEveryJobCount) {
  TempDir dir;
  const auto model = write_model(dir, "att.onnxtxt", kAttention);
  std::string first;
  for (const char* jobs : {"1", "2", "2"}) {
    const auto out = dir / (std::string("out") + jobs);
    std::filesystem::remove_all(out);
    auto r = run_reduce({model, "--engine", "opt:fault=attention-unstable-softmax", "--input-range", "Q:3,4",
                         "--input-range", "K:3,4", "-j", jobs, "-o", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string bytes = read_bytes(out / "model.onnx");
    if (first.empty()) first = bytes;
    EXPECT_EQ(bytes, first) << "-j " << jobs;
    const std::string report = read_bytes(out / "report.json");
    EXPECT_NE(report.find("\"kind\": \"nonfinite\""), std::string::npos) << report;
    EXPECT_NE(report.find("\"MatMul\": 2"), std::string::npos) << report;
    EXPECT_NE(report.find("\"Softmax\": 1"), std::string::npos) << report;
  }
}

TEST(ReduceCli, ResumeContinuesFromTheJournal) {
  TempDir dir;
  const auto model = write_model(dir, "att.onnxtxt", kAttention);
  const auto out = dir / "out";
  const std::vector<std::string> base{model, "--engine", "opt:fault=attention-unstable-softmax", "--input-range", "Q:3,4",
                                      "--input-range", "K:3,4", "-o", out.string()};
  ASSERT_EQ(run_reduce(base).exit_code, 0);
  const std::string first = read_bytes(out / "model.onnx");
  auto args = base;
  args.push_back("--resume");
  auto resumed = run_reduce(args);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resuming from 4 nodes"), std::string::npos) << resumed.err;
  EXPECT_EQ(read_bytes(out / "model.onnx"), first);
  // Without a journal there is nothing to resume.
  std::filesystem::remove(out / "journal");
  auto missing = run_reduce(args);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("journal"), std::string::npos) << missing.err;
}

TEST(ReduceCli, ExitsWithThreeWhenTheModelDoesNotFail) {
  TempDir dir;
  const auto model = write_model(dir, "bb.onnxtxt", kBroadcastChain);
  auto r = run_reduce({model, "--engine", "opt", "-o", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("does not fail"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "report.json"));
}

// Bad specs and pass names are usage errors found before anything is loaded: the model named here
// does not exist, and the message is about the flag, in one line.
TEST(CheckCli, AnUnknownFaultIsAUsageErrorListingTheKnownFaults) {
  auto r = run_reduce({"check", "no-such-model.onnx", "--engine", "opt:fault=nonsense"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("error: --engine: opt:fault=nonsense: unknown fault 'nonsense' (known: broadcast-batch1, ", 0), 0u)
      << r.err;
  EXPECT_NE(r.err.find("hardsigmoid-default-alpha)"), std::string::npos) << r.err;  // the last of faults.def
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(CheckCli, ABadReferenceSpecIsAUsageError) {
  auto r = run_reduce({"compare", "no-such-model.onnx", "--engine", "opt", "--reference", "isolated:isolated:ref"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "error: --reference: isolated:isolated:ref: an isolated engine is already isolated\n");
}

TEST(ReduceCli, BadEngineSpecsAndPassNamesAreUsageErrorsBeforeAnyWork) {
  auto engine = run_reduce({"no-such-model.onnx", "--engine", "cmd:"});
  EXPECT_EQ(engine.exit_code, 2) << engine.err;
  EXPECT_EQ(engine.err, "error: --engine: cmd:: 'cmd' needs a command template: cmd:TEMPLATE\n");
  auto passes = run_reduce({"no-such-model.onnx", "--engine", "opt", "--passes", "node-removal,nonsense"});
  EXPECT_EQ(passes.exit_code, 2) << passes.err;
  EXPECT_EQ(passes.err, "error: --passes: unknown pass 'nonsense' (see --print-passes)\n");
  auto skipped = run_reduce({"no-such-model.onnx", "--engine", "opt", "--skip-passes", "nonsense"});
  EXPECT_EQ(skipped.exit_code, 2) << skipped.err;
  EXPECT_EQ(skipped.err, "error: --skip-passes: unknown pass 'nonsense' (see --print-passes)\n");
}

// --print-passes marks the passes that --simplify-runs bounds (those that edit without removing);
// it needs no model, and options may come before the model.
TEST(ReduceCli, PrintPassesMarksTheSimplifyingPasses) {
  auto r = run_reduce({"--print-passes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  size_t marked = 0, listed = 0;
  for (std::string line; std::getline(lines, line);) {
    ++listed;
    const bool simplifies = line.find("[simplifies: --simplify-runs]") != std::string::npos;
    marked += simplifies;
    for (const char* name : {"cut-as-constant", "shape-reduction", "fill-weights", "drop-attributes"})
      if (line.rfind(name, 0) == 0) {
        EXPECT_TRUE(simplifies) << line;
      }
    for (const char* name : {"first-divergence", "node-removal", "certify"})
      if (line.rfind(name, 0) == 0) {
        EXPECT_FALSE(simplifies) << line;
      }
  }
  EXPECT_EQ(marked, 4u);
  EXPECT_GE(listed, 10u);
}

}  // namespace
}  // namespace reduce
