// External engines from the CLI: check: scripts decide (fail codes, regex, timeout, crash), cmd:
// engines run a model, paths with shell syntax arrive intact, and --slot-env pins a slot per run.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

using testing::read_bytes;
using testing::run_process;
using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

std::string model_in(const TempDir& dir) {
  write_bytes(dir / "m.onnxtxt", testing::kBroadcastChain);
  return (dir / "m.onnxtxt").string();
}

std::string script(const TempDir& dir, const std::string& name, const std::string& body) {
  write_bytes(dir / name, "#!/bin/sh\n" + body);
  return (dir / name).string();
}

TEST(CheckScriptCli, TheScriptDecidesAndReduceKeepsWhatItWants) {
  TempDir dir;
  // "Fails" while the model still has a Tanh node: an importer-style check on the model file.
  const auto s = script(dir, "has_tanh.sh", "if grep -aq Tanh \"$1\"; then echo 'assertion: Tanh layer rejected'; exit 1; fi\nexit 0\n");
  const std::string engine = "check:sh " + s + " {model}";
  auto check = run_reduce({"check", model_in(dir), "--engine", engine});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  auto r = run_reduce({model_in(dir), "--engine", engine, "-o", (dir / "out").string(), "-j", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string report = read_bytes(dir / "out" / "report.json");
  EXPECT_NE(report.find("\"reduced\": {\n    \"nodes\": 1"), std::string::npos) << report;
  EXPECT_NE(report.find("\"Tanh\": 1"), std::string::npos) << report;
}

// An engine that writes a megabyte on one line: the failure is reported once, cut to its start.
TEST(CheckScriptCli, AMegabyteErrorLineIsReportedOnceAndCut) {
  TempDir dir;
  const auto s = script(dir, "loud.sh", "head -c 1048576 /dev/zero | tr '\\0' x >&2\necho >&2\nexit 1\n");
  auto check = run_reduce({"check", model_in(dir), "--engine", "check:sh " + s + " {model}"});
  EXPECT_EQ(check.exit_code, 1) << check.err;
  EXPECT_LT(check.out.size() + check.err.size(), 2000u) << check.out.substr(0, 2000);
  EXPECT_NE(check.out.find("[line truncated]"), std::string::npos) << check.out;
}

TEST(CheckScriptCli, EngineRunsInTheReportCountTheScriptRuns) {
  TempDir dir;
  const auto log = dir / "runs.log";
  const auto s = script(dir, "count.sh", "echo run >> '" + log.string() + "'\nif grep -aq Tanh \"$1\"; then exit 1; fi\nexit 0\n");
  auto r = run_reduce({model_in(dir), "--engine", "check:sh " + s + " {model}", "-j", "1", "-o", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::istringstream lines(read_bytes(log));
  size_t runs = 0;
  for (std::string line; std::getline(lines, line);) ++runs;
  const std::string report = read_bytes(dir / "out" / "report.json");
  EXPECT_NE(report.find("\"engine_runs\": " + std::to_string(runs) + ","), std::string::npos) << runs << "\n" << report;
  // Refused and cached candidates are checks too, but never reach the script.
  EXPECT_EQ(report.find("\"checks\": " + std::to_string(runs) + ","), std::string::npos) << report;
}

TEST(CheckScriptCli, FailCodesAndRegexRefineTheDecision) {
  TempDir dir;
  const auto s = script(dir, "exit3.sh", "echo 'internal error 0x1f: bad layer'; exit 3\n");
  const std::string engine = "check:sh " + s;
  EXPECT_EQ(run_reduce({"check", model_in(dir), "--engine", engine}).exit_code, 1);
  EXPECT_EQ(run_reduce({"check", model_in(dir), "--engine", engine, "--ignore-fail-code", "3"}).exit_code, 0);
  EXPECT_EQ(run_reduce({"check", model_in(dir), "--engine", engine, "--fail-code", "4"}).exit_code, 0);
  EXPECT_EQ(run_reduce({"check", model_in(dir), "--engine", engine, "--fail-code", "3"}).exit_code, 1);
}

TEST(CheckScriptCli, AHangingScriptIsKilledAtTheTimeout) {
  TempDir dir;
  const auto s = script(dir, "hang.sh", "sleep 120 &\nsleep 120\n");
  const auto start = std::chrono::steady_clock::now();
  auto r = run_reduce({"check", model_in(dir), "--engine", "check:sh " + s, "--timeout", "1"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL (timeout)"), std::string::npos) << r.out;
  EXPECT_LT(seconds, 60) << "waited for the script instead of killing it";
}

TEST(CheckScriptCli, ACrashingScriptGivesCrashWithItsSignal) {
  TempDir dir;
  const auto s = script(dir, "crash.sh", "kill -SEGV $$\n");
  auto r = run_reduce({"check", model_in(dir), "--engine", "check:sh " + s});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("signature: crash: signal 11"), std::string::npos) << r.out;
}

TEST(CommandEngineCli, OutputsOfAnExternalRunAreComparedByTheOracle) {
  TempDir dir;
  const std::string reduce_bin = std::string(REDUCE_BINARY_DIR) + "/reduce";
  const std::string engine = "cmd:" + reduce_bin + " run {model} --engine opt:fault=broadcast-batch1 --inputs {inputs} --save-outputs {outputs}";
  auto r = run_reduce({"check", model_in(dir), "--engine", engine});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL (mismatch)"), std::string::npos) << r.out;
  const std::string good = "cmd:" + reduce_bin + " run {model} --engine opt --inputs {inputs} --save-outputs {outputs}";
  EXPECT_EQ(run_reduce({"check", model_in(dir), "--engine", good}).exit_code, 0);
}

TEST(CommandEngineCli, PathsWithSpacesAndShellSyntaxArriveIntact) {
  TempDir dir;
  const auto odd = dir.path() / "a b;$(touch pwned)`id`'q";
  std::filesystem::create_directories(odd);
  const std::string model = (odd / "m x;y.onnxtxt").string();
  write_bytes(model, testing::kBroadcastChain);
  // The script fails (exit 1) only when its argument is not an existing file.
  const auto s = script(dir, "exists.sh", "test -f \"$1\" || { echo \"not a file: $1\"; exit 1; }\nexit 0\n");
  // Temporary folders (where candidates are written) live under an odd TMPDIR too.
  setenv("TMPDIR", odd.c_str(), 1);
  auto r = run_reduce({"check", model, "--engine", "check:sh " + s + " {model}"});
  unsetenv("TMPDIR");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(std::filesystem::exists("pwned"));
  EXPECT_FALSE(std::filesystem::exists(odd / "pwned"));
}

TEST(SlotEnvCli, EachConcurrentRunGetsItsSlot) {
  TempDir dir;
  const auto log = dir / "slots.log";
  // Fails while Tanh is there; logs the device it was given.
  const auto s = script(dir, "slot.sh", "echo \"$SLOT_DEVICE\" >> '" + log.string() +
                                            "'\nif grep -aq Tanh \"$1\"; then exit 1; fi\nexit 0\n");
  auto r = run_reduce({model_in(dir), "--engine", "check:sh " + s + " {model}", "--slot-env", "SLOT_DEVICE=gpu{slot}",
                       "--slots", "2", "-o", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::istringstream lines(read_bytes(log));
  size_t runs = 0;
  for (std::string line; std::getline(lines, line); ++runs) EXPECT_TRUE(line == "gpu0" || line == "gpu1") << line;
  EXPECT_GT(runs, 3u);
}

}  // namespace
}  // namespace reduce
