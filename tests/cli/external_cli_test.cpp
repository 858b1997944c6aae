// External engines from the CLI: check: scripts decide (fail codes, regex, timeout, crash), cmd:
// engines run a model, paths with shell syntax arrive intact, and --slot-env pins a slot per run.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
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

// OpenCV 4.6 fails on a TorchScript export of DeBERTa-v2 at one node when given the file, and at
// another when its Constant nodes are initializers: reduce used to hand every engine the second
// form, and reduced a failure the user never had. The original's check and the reproducer now
// carry each constant in the form the user's file has it.
TEST(CheckScriptCli, TheEngineSeesEachConstantInTheFormOfTheUsersFile) {
  TempDir dir;
  write_bytes(dir / "k.onnxtxt", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] X) => (float[2, 3] Y)
{
  k = Constant<value = float[2, 3] {1, 2, 3, 4, 5, 6}>()
  a = Relu(X)
  b = Mul(a, k)
  c = Tanh(b)
  Y = Neg(c)
}
)");
  const auto s = script(dir, "forms.sh",
                        "if grep -aq Constant \"$1\"; then echo 'Constant node refused'; exit 1; fi\n"
                        "if grep -aq Tanh \"$1\"; then echo 'Tanh refused'; exit 1; fi\nexit 0\n");
  const std::string engine = "check:sh " + s + " {model}";
  // The failure the user sees on the file is the one kept (the other one is not "the same").
  const std::vector<std::string> kept = {"--engine", engine, "--fail-regex", "Constant node refused"};
  std::vector<std::string> args = {"check", (dir / "k.onnxtxt").string()};
  args.insert(args.end(), kept.begin(), kept.end());
  auto check = run_reduce(args);
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  args = {(dir / "k.onnxtxt").string(), "-j", "1", "-o", (dir / "out").string()};
  args.insert(args.end(), kept.begin(), kept.end());
  auto r = run_reduce(args);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string report = read_bytes(dir / "out" / "report.json");
  EXPECT_NE(report.find("\"Mul\": 1"), std::string::npos) << report;
  EXPECT_NE(read_bytes(dir / "out" / "model.onnx").find("Constant"), std::string::npos);
}

// An engine that fails on every model (TensorRT 11 refusing --fp16, a missing library, a script
// that always fails) used to be shrunk to a one-node "reproducer" of its usage error. It is a setup
// problem: exit 7 before the search, nothing written; --allow-model-independent reduces anyway.
TEST(ModelIndependentCli, AnEngineThatFailsOnEveryModelIsNotShrunk) {
  TempDir dir;
  const auto refuses = script(dir, "refuses.sh", "echo '[E] Unknown option: --fp16' >&2\nexit 1\n");
  const std::vector<std::string> engines = {"check:sh " + refuses + " {model}",
                                            "cmd:sh " + refuses + " {model} {inputs} {outputs}"};
  for (const std::string& engine : engines) {
    auto r = run_reduce({model_in(dir), "--engine", engine, "-o", (dir / "out").string()});
    EXPECT_EQ(r.exit_code, 7) << engine << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("fails the same way on every probe model"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("probe: Relu of an Add of a float32[1,4] input and a weight: fails the same way"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Unknown option"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir / "out" / "model.onnx"));
    EXPECT_FALSE(fs::exists(dir / "out" / "report.json"));
  }
  auto anyway = run_reduce({model_in(dir), "--engine", engines[0], "--allow-model-independent", "-j", "1", "-o",
                            (dir / "anyway").string()});
  EXPECT_EQ(anyway.exit_code, 0) << anyway.out << anyway.err;
  EXPECT_TRUE(fs::exists(dir / "anyway" / "report.json"));
  // A failure of this model is reduced as before: the one-node model passes.
  const auto tanh = script(dir, "tanh.sh", "if grep -aq Tanh \"$1\"; then exit 1; fi\nexit 0\n");
  EXPECT_EQ(run_reduce({model_in(dir), "--engine", "check:sh " + tanh + " {model}", "-o", (dir / "tanh").string()}).exit_code, 0);
}

// `reduce precision --confirm`: after the search, the set is run again (it must pass) and so is the
// model as it is (it must fail the same way). An engine whose failure does not come back on a second
// sight of the same model gives a set that means nothing: exit 6, and the bundle says so.
TEST(CheckScriptCli, APrecisionAnswerIsConfirmedOnFreshRuns) {
  TempDir dir;
  // Fails unless the Mul (node_2 once named) is in FP32.
  const auto steady = script(dir, "steady.sh", "case \"$2\" in *node_2*) exit 0;; esac\necho 'engine: boom'; exit 1\n");
  auto r = run_reduce({"precision", model_in(dir), "--engine", "check:sh " + steady + " {model} {fp32_nodes}", "--confirm",
                       "2", "-o", (dir / "steady").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(read_bytes(dir / "steady" / "precision.txt"), "node_2\n");
  EXPECT_NE(r.out.find("confirmed: with the set 2 of 2 fresh run(s) pass, as it is 2 of 2 fail the same way"), std::string::npos) << r.out;
  const std::string report = read_bytes(dir / "steady" / "report.json");
  EXPECT_NE(report.find("\"original_failed_again\": 2"), std::string::npos) << report;
  // The same, but a model and set it has seen before always passes: the first sight of the model
  // as it is failed, its fresh run does not.
  const std::string seen = (dir / "once.sh.seen").string();
  const auto once = script(dir, "once.sh",
                           "h=$(printf '%s' \"$2\" | cat \"$1\" - | cksum | cut -d' ' -f1)\n"
                           "n=$(grep -c \"^$h$\" '" + seen + "' 2>/dev/null)\necho $h >> '" + seen + "'\n"
                           "[ \"$n\" -gt 0 ] && exit 0\ncase \"$2\" in *node_2*) exit 0;; esac\necho 'engine: boom'; exit 1\n");
  auto flaky = run_reduce({"precision", model_in(dir), "--engine", "check:sh " + once + " {model} {fp32_nodes}", "-o",
                           (dir / "once").string()});
  EXPECT_EQ(flaky.exit_code, 6) << flaky.out << flaky.err;
  EXPECT_NE(flaky.out.find("NOT CONFIRMED"), std::string::npos) << flaky.out;
  EXPECT_NE(read_bytes(dir / "once" / "report.md").find("**Not confirmed**"), std::string::npos);
  EXPECT_EQ(run_reduce({"precision", model_in(dir), "--engine", "check:sh " + steady + " {model} {fp32_nodes}",
                        "--confirm", "0"}).exit_code, 2);
}

// Whether a process runs (exists and is not a zombie waiting for a parent that does not reap).
bool running(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// A process an engine starts in a session of its own (`setsid`, a daemon) escapes the kill of the
// engine's process group; it is ended with the run all the same, also after a timeout.
TEST(CheckScriptCli, ASetsidGrandchildOfAnEngineEndsWithTheRun) {
  TempDir dir;
  for (const char* how : {"exit 1", "sleep 30"}) {
    const fs::path pid_file = dir / "grandchild.pid";
    std::filesystem::remove(pid_file);
    const auto s = script(dir, "daemon.sh", "setsid sleep 300 >/dev/null 2>&1 < /dev/null &\necho $! > '" +
                                                 pid_file.string() + "'\n" + how + "\n");
    auto r = run_reduce({"check", model_in(dir), "--engine", "check:sh " + s + " {model}", "--timeout", "2"});
    EXPECT_EQ(r.exit_code, 1) << how << "\n" << r.out << r.err;
    const std::string pid = read_bytes(pid_file);
    ASSERT_FALSE(pid.empty());
    EXPECT_FALSE(running(pid.substr(0, pid.find('\n')))) << how << ": the setsid grandchild " << pid << " outlived the run";
  }
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

// A build error comes after the build log: the failing line after 2 MB of output is still matched
// (the first and the last 512 KiB are kept), and one in the middle of 4 MB is not claimed.
TEST(CheckScriptCli, AFailingLineAfterMegabytesOfLogIsMatched) {
  TempDir dir;
  const auto late = "check:sh " + script(dir, "late.sh", "head -c 2000000 /dev/zero | tr '\\0' '.'; echo; echo 'ERROR: Assertion failed in layer 7'; exit 0\n");
  auto r = run_reduce({"check", model_in(dir), "--engine", late, "--fail-regex", "Assertion failed"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto middle = "check:sh " + script(dir, "middle.sh", "head -c 2000000 /dev/zero | tr '\\0' '.'; echo; echo 'ERROR: Assertion failed';"
                                                               " head -c 2000000 /dev/zero | tr '\\0' '.'; exit 0\n");
  EXPECT_EQ(run_reduce({"check", model_in(dir), "--engine", middle, "--fail-regex", "Assertion failed"}).exit_code, 0);
}

// Polygraphy's semantics (docs/oracle.md): without --fail-code a regex decides alone, exit 0
// included; several regexes, after one flag or repeated, fail on any match; with --fail-code a
// listed code fails only when a regex (if given) matches too; --fail-code takes several codes.
TEST(CheckScriptCli, FailRegexAndFailCodeFollowPolygraphy) {
  TempDir dir;
  const auto zero = "check:sh " + script(dir, "zero.sh", "echo 'BAD NODE: conv_3'; exit 0\n");
  const auto three = "check:sh " + script(dir, "three.sh", "echo 'internal error: REALLY BAD'; exit 3\n");
  auto code = [&](const std::string& engine, std::vector<std::string> extra) {
    std::vector<std::string> args{"check", model_in(dir), "--engine", engine};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_reduce(args);
    return r.exit_code;
  };
  EXPECT_EQ(code(zero, {}), 0);
  EXPECT_EQ(code(zero, {"--fail-regex", "BAD NODE"}), 1);                       // a match on exit 0 fails
  EXPECT_EQ(code(zero, {"--fail-regex", "REALLY BAD", "BAD NODE"}), 1);         // any of several, one flag
  EXPECT_EQ(code(zero, {"--fail-regex", "REALLY BAD", "--fail-regex", "BAD NODE"}), 1);  // repeated
  EXPECT_EQ(code(three, {"--fail-regex", "BAD NODE"}), 0);                      // no match: passes, exit 3 or not
  EXPECT_EQ(code(three, {"--fail-code", "3", "--fail-regex", "BAD NODE"}), 0);  // listed code, no match
  EXPECT_EQ(code(three, {"--fail-code", "3", "--fail-regex", "BAD NODE", "REALLY BAD"}), 1);
  EXPECT_EQ(code(zero, {"--fail-code", "3", "--fail-regex", "BAD NODE"}), 0);   // a match on an unlisted code
  EXPECT_EQ(code(three, {"--fail-code", "1", "3"}), 1);                         // several codes
  EXPECT_EQ(code(three, {"--fail-code", "1", "2"}), 0);
  EXPECT_EQ(code(three, {"--ignore-fail-code", "2", "3", "--fail-regex", "REALLY BAD"}), 0);
  for (const char* code : {"256", "-1"}) {  // never an exit code: refused, not silently never matched
    auto r = run_reduce({"check", model_in(dir), "--engine", zero, "--fail-code", code});
    EXPECT_EQ(r.exit_code, 2) << code << r.out << r.err;
    EXPECT_NE(r.err.find("is not an exit code (0..255)"), std::string::npos) << r.err;
  }
  auto bad = run_reduce({"check", model_in(dir), "--engine", zero, "--fail-regex", "ok", "--fail-regex", "("});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("invalid --fail-regex '('"), std::string::npos) << bad.err;
}

// --fail-regex is RE2 (docs/oracle.md): std::regex overflowed its stack on a long line, never
// returned on nested stars, and took backreferences that RE2 refuses.
TEST(CheckScriptCli, FailRegexJudgesAMegabyteLineAndRefusesBackreferences) {
  TempDir dir;
  const auto loud = "check:sh " + script(dir, "loud.sh",
                                         "head -c 1000000 /dev/zero | tr '\\0' x\necho ' Assertion failed: Cast'\nexit 0\n");
  auto code = [&](const std::string& engine, const std::string& regex) {
    auto r = run_reduce({"check", model_in(dir), "--engine", engine, "--fail-regex", regex});
    EXPECT_LE(r.exit_code, 1) << regex << ": " << r.out.substr(0, 2000) << r.err.substr(0, 2000);
    return r.exit_code;
  };
  EXPECT_EQ(code(loud, "[^\\n]*Cast"), 1);
  EXPECT_EQ(code(loud, "(x|y)*z"), 0);
  const auto as = "check:sh " + script(dir, "as.sh", "printf '%0200d' 0 | tr 0 a\nexit 0\n");
  EXPECT_EQ(code(as, "(a*)*(a*)*(a*)*b$"), 0);
  EXPECT_EQ(code(as, "^a{200}$"), 1);
  auto bad = run_reduce({"check", model_in(dir), "--engine", loud, "--fail-regex", "(a)\\1"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find(": invalid --fail-regex '(a)\\1': invalid escape sequence: \\1 "
                         "(RE2 has no backreferences; docs/oracle.md)\n"),
            std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

// A check: script whose verdict on a model depends on how often it has seen that exact file
// before (SEEN: earlier sightings): every candidate of the search is new to it, a fresh run of
// the reproducer is not. Deterministic whatever order the runs start in.
// `fails_when` is a shell condition on "$1" and $SEEN.
std::string sighting_script(const TempDir& dir, const std::string& name, const std::string& fails_when) {
  const std::string seen = (dir / (name + ".seen")).string();
  return script(dir, name,
                "h=$(cksum < \"$1\" | cut -d' ' -f1)\n"
                "SEEN=$(grep -c \"^$h$\" '" + seen + "' 2>/dev/null)\n"
                "echo $h >> '" + seen + "'\n"
                "if " + fails_when + "; then echo 'engine: boom'; exit 1; fi\nexit 0\n");
}

// Fails while the model has the Tanh and `also` holds.
std::string tanh_and(const std::string& also) { return "grep -aq Tanh \"$1\" && " + also; }

// A reproducer is reported only after it failed again on the engine, never from the cache: an
// engine whose failure does not come back on a second run of the same file ("reduced 6 -> 1
// nodes, 1-minimal", exit 0 before) is not confirmed, exit 6, and the bundle says so.
TEST(CheckScriptCli, AReproducerThatDoesNotFailAgainIsNotConfirmed) {
  TempDir dir;
  const auto s = sighting_script(dir, "first_sight.sh", tanh_and("[ \"${SEEN:-0}\" -eq 0 ]"));
  auto r = run_reduce({model_in(dir), "--engine", "check:sh " + s + " {model}", "-j", "1", "-o", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 6) << r.out << r.err;
  // The first fresh run did not fail: a reason for two more (confirm_runs_for), so that it says how often.
  EXPECT_NE(r.out.find("NOT CONFIRMED: 0 of 3 fresh run(s) of the reproducer fail the same way"), std::string::npos) << r.out;
  const std::string report = read_bytes(dir / "out" / "report.json");
  EXPECT_NE(report.find("\"confirm\": {\n    \"runs\": 3,\n    \"failed_again\": 0\n  }"), std::string::npos) << report;
  EXPECT_NE(read_bytes(dir / "out" / "report.md").find("**NOT CONFIRMED:**"), std::string::npos);
}

// Trust costs runs only where the engine gave a reason (issue 69). A deterministic engine and a
// reproducer of 3 nodes (1-2 nodes is where random engines' reductions end, a reason of its own):
// one fresh run, no probe model again, and report.json says where the runs went.
TEST(CheckScriptCli, ADeterministicEngineGetsOneFreshRunAndNoProbesAgain) {
  TempDir dir;
  const auto s = script(dir, "three.sh",
                        "if grep -aq Relu \"$1\" && grep -aq Mul \"$1\" && grep -aq Tanh \"$1\"; then echo 'engine: rejected'; "
                        "exit 1; fi\nexit 0\n");
  auto r = run_reduce({model_in(dir), "--engine", "check:sh " + s + " {model}", "-j", "1", "-o", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("reduced 6 -> 3 nodes (Mul x1, Relu x1, Tanh x1), 1-minimal"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("confirmed: 1 of 1 fresh run(s)"), std::string::npos) << r.out;
  const auto report = nlohmann::json::parse(read_bytes(dir / "out" / "report.json"));
  EXPECT_TRUE(report["trust"]["reasons"].empty()) << report["trust"];
  const auto& runs = report["engine_runs_by_purpose"];
  EXPECT_EQ(runs["confirmation"], 1);
  EXPECT_EQ(runs["probes"], report["probes"]["models"].size());  // the probes before the search only
  EXPECT_EQ(runs["search"].get<uint64_t>() + runs["confirmation"].get<uint64_t>() + runs["probes"].get<uint64_t>() +
                runs["bundle"].get<uint64_t>(),
            report["engine_runs"].get<uint64_t>());
  const auto& rounds = report["rounds_by_purpose"];
  EXPECT_EQ(rounds["search"].get<uint64_t>() + rounds["confirmation"].get<uint64_t>() + rounds["probes"].get<uint64_t>() +
                rounds["bundle"].get<uint64_t>(),
            report["rounds"].get<uint64_t>());
  EXPECT_EQ(read_bytes(dir / "out" / "report.json").find("(again, after the search)"), std::string::npos);
  EXPECT_NE(read_bytes(dir / "out" / "report.md").find("the engine gave no sign of flakiness"), std::string::npos);
}

// A one-node reproducer on the same kind of engine: 3 fresh runs and the probes again, in one round
// of waiting when the slots hold them all (-j 8), and the reason said.
TEST(CheckScriptCli, ATinyReproducerGetsMoreTrustRunsInOneRound) {
  TempDir dir;
  const auto s = script(dir, "tanh.sh", "if grep -aq Tanh \"$1\"; then echo 'engine: Tanh rejected'; exit 1; fi\nexit 0\n");
  auto r = run_reduce({model_in(dir), "--engine", "check:sh " + s + " {model}", "-j", "8", "-o", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("confirmed: 3 of 3 fresh run(s)"), std::string::npos) << r.out;
  const auto report = nlohmann::json::parse(read_bytes(dir / "out" / "report.json"));
  const std::string reasons = report["trust"]["reasons"].dump();
  EXPECT_NE(reasons.find("a reproducer of 1 node(s), where reductions on an engine that fails at random end"), std::string::npos)
      << reasons;
  // The first fresh run beside certify's last round or after it, then the other two and the probes together.
  EXPECT_LE(report["rounds_by_purpose"]["confirmation"].get<uint64_t>(), 2u) << report["rounds_by_purpose"];
  EXPECT_EQ(report["rounds_by_purpose"]["probes"], 0) << report["rounds_by_purpose"];
  EXPECT_NE(read_bytes(dir / "out" / "report.json").find("(again, after the search)"), std::string::npos);
}

// An engine that goes bad during the reduction (a device that fails from its ninth run on, whatever
// the model), run with --repeat (the user expects a flaky engine: a reason for more trust runs). The
// probe models passed before the search; they run again beside the tiny reproducer's confirmation,
// fail the same way now, and the bundle is written with the warning.
TEST(CheckScriptCli, WithAReasonProbesRunAgainBesideATinyReproducerAndAFailureNowIsSaid) {
  TempDir dir;
  const std::string count = (dir / "runs").string();
  const auto s = script(dir, "goes_bad.sh",
                        "n=$(( $(cat '" + count + "' 2>/dev/null || echo 0) + 1 )); echo $n > '" + count + "'\n"
                        "if grep -aq Tanh \"$1\" || [ $n -gt 8 ]; then echo 'engine: device lost'; exit 1; fi\nexit 0\n");
  auto r = run_reduce({model_in(dir), "--engine", "check:sh " + s + " {model}", "-j", "1", "--repeat", "2", "-o",
                       (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("WARNING: a probe model that shares nothing with the reproducer fails the same way"), std::string::npos)
      << r.out;
  const std::string report = read_bytes(dir / "out" / "report.json");
  EXPECT_NE(report.find("(again, after the search)"), std::string::npos) << report;
  EXPECT_NE(report.find("\"setup_suspect\": true"), std::string::npos) << report;
  EXPECT_NE(report.find("--repeat 2 (an engine expected to be flaky)"), std::string::npos) << report;
  EXPECT_NE(read_bytes(dir / "out" / "report.md").find("**Warning: this reproducer may show the engine's setup"), std::string::npos);
  EXPECT_NE(read_bytes(dir / "out" / "report.md").find("**More trust runs, because:** --repeat 2"), std::string::npos);
}

// An engine that fails on every other run of the same file: --confirm 4 sees 2 of 4 and says so;
// a steady failure is confirmed 4 of 4, exit 0.
TEST(CheckScriptCli, ConfirmRunsTheReproducerAgainAndCountsTheFailures) {
  TempDir dir;
  auto confirm = [&](const std::string& engine, const std::string& out) {
    return run_reduce({model_in(dir), "--engine", "check:sh " + engine + " {model}", "-j", "1", "--confirm", "4",
                       "-o", (dir / out).string()});
  };
  auto good = confirm(sighting_script(dir, "steady.sh", tanh_and("true")), "steady");
  EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
  EXPECT_NE(good.out.find("confirmed: 4 of 4 fresh run(s)"), std::string::npos) << good.out;
  EXPECT_NE(read_bytes(dir / "steady" / "report.md").find("**Confirmed:** the reproducer failed the same way in 4 of 4"),
            std::string::npos);
  auto flaky = confirm(sighting_script(dir, "flaky.sh", tanh_and("[ $(( ${SEEN:-0} % 2 )) -eq 0 ]")), "flaky");
  EXPECT_EQ(flaky.exit_code, 6) << flaky.out << flaky.err;
  EXPECT_NE(flaky.out.find("NOT CONFIRMED: 2 of 4 fresh run(s)"), std::string::npos) << flaky.out;
  EXPECT_NE(read_bytes(dir / "flaky" / "report.json").find("\"failed_again\": 2"), std::string::npos);
  // Without --confirm a one- or two-node reproducer runs three times: an engine that fails on every
  // other run of one file is caught, where one run would have seen a failure and said "confirmed".
  auto tiny = run_reduce({model_in(dir), "--engine", "check:sh " + sighting_script(dir, "flaky2.sh", tanh_and("[ $(( ${SEEN:-0} % 2 )) -eq 0 ]")) + " {model}",
                          "-j", "1", "-o", (dir / "tiny").string()});
  EXPECT_EQ(tiny.exit_code, 6) << tiny.out << tiny.err;
  EXPECT_NE(tiny.out.find("NOT CONFIRMED: 1 of 3 fresh run(s)"), std::string::npos) << tiny.out;
  auto once = run_reduce({model_in(dir), "--engine", "check:sh " + dir.path().string() + "/steady.sh {model}", "-j", "1",
                          "--confirm", "1", "-o", (dir / "once").string()});
  EXPECT_EQ(once.exit_code, 0) << once.out << once.err;
  EXPECT_NE(once.out.find("confirmed: 1 of 1 fresh run(s)"), std::string::npos) << once.out;
  // --repeat 3 on that engine: checks whose runs disagree prove it flaky, which is a warning, with
  // the confirmation runs of a tiny reproducer.
  auto repeated = run_reduce({model_in(dir), "--engine", "check:sh " + sighting_script(dir, "flaky3.sh", tanh_and("[ $(( ${SEEN:-0} % 2 )) -eq 0 ]")) + " {model}",
                              "-j", "1", "--repeat", "3", "-o", (dir / "repeated").string()});
  EXPECT_NE(repeated.out.find("WARNING: the engine gave two verdicts on one model"), std::string::npos) << repeated.out;
  EXPECT_NE(read_bytes(dir / "repeated" / "report.md").find("**Warning: the engine is flaky.**"), std::string::npos);
  auto zero = run_reduce({model_in(dir), "--engine", "check:sh " + dir.path().string() + "/steady.sh {model}", "--confirm", "0"});
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
}

// `check` on every engine that writes files under TMPDIR, run as `[launcher] bash -c '(PREFIX; exec
// reduce check ...) | cat'` with TMPDIR=`tmpdir`: exit 2 saying it is not the engine's failure and naming
// `names`, never a verdict.
void expect_setup_error(const std::string& model, const std::string& tmpdir, const std::vector<std::string>& launcher,
                        const std::string& prefix, const std::string& names) {
  const std::string reduce_bin = std::string(REDUCE_BINARY_DIR) + "/reduce";
  for (const std::string& engine : {"cmd:" + reduce_bin + " run {model} --inputs {inputs} --save-outputs {outputs}",
                                   std::string("isolated:opt"), std::string("opencv")}) {
    std::vector<std::string> argv = launcher;
    // The output reaches the test through a pipe: a file limit set in `prefix` applies to reduce only.
    argv.insert(argv.end(), {"bash", "-c",
                             "(" + prefix + "\nTMPDIR=\"$1\" exec \"$2\" check \"$3\" --engine \"$4\") 2>&1 | cat\n"
                             "exit ${PIPESTATUS[0]}", "bash", tmpdir, reduce_bin, model, engine});
    auto r = testing::run_process(argv);
    EXPECT_EQ(r.exit_code, 2) << engine << " " << prefix << "\n" << r.out << r.err;
    EXPECT_EQ(r.out.find("verdict: FAIL"), std::string::npos) << engine << "\n" << r.out;
    EXPECT_NE((r.out + r.err).find("not the engine's failure"), std::string::npos) << engine << "\n" << r.out << r.err;
    EXPECT_NE((r.out + r.err).find(names), std::string::npos) << engine << "\n" << r.out << r.err;
  }
}

// The tool's own failures are never engine verdicts: with TMPDIR missing (or a file), `cmd:`,
// `isolated:` and `opencv` used to say FAIL (error) on a passing model, and `reduce` made a
// one-node "reproducer" of "temporary folder: No such file or directory". Now: exit 2, naming TMPDIR.
TEST(SetupErrors, ABrokenTmpdirIsExitTwoNamingItNeverAFailure) {
  TempDir dir;
  write_bytes(dir / "a_file", "x");
  const std::string reduce_bin = std::string(REDUCE_BINARY_DIR) + "/reduce";
  const std::string model = model_in(dir);
  for (const std::string& tmpdir : {(dir / "missing").string(), (dir / "a_file").string()}) {
    expect_setup_error(model, tmpdir, {}, "true", tmpdir);
    const std::string engine = "cmd:" + reduce_bin + " run {model} --inputs {inputs} --save-outputs {outputs}";
    auto reduced = testing::run_process({"env", "TMPDIR=" + tmpdir, reduce_bin, model, "--engine", engine, "-o",
                                         (dir / "out").string()});
    EXPECT_EQ(reduced.exit_code, 2) << reduced.out << reduced.err;
    EXPECT_FALSE(fs::exists(dir / "out" / "report.json"));
  }
  // A command that cannot start is the setup's problem too.
  auto r = run_reduce({"check", model, "--engine", "cmd:/nonexistent/engine {model}"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out.find("verdict: FAIL"), std::string::npos) << r.out;
}

// A full disk: files may not grow (RLIMIT_FSIZE 0, SIGXFSZ ignored: writes fail with EFBIG, as
// they fail with ENOSPC on a full filesystem), wherever TMPDIR is.
TEST(SetupErrors, AFullTmpdirIsExitTwoNeverAFailure) {
  TempDir dir;
  expect_setup_error(model_in(dir), dir.path().string(), {}, "trap '' XFSZ; ulimit -f 0", dir.path().string());
}

// A read-only and a full filesystem as TMPDIR, each a tiny tmpfs in a mount namespace of the test's
// own (root in this sandbox and in CI; elsewhere a folder without write permission stands in for
// the read-only one).
TEST(SetupErrors, AReadOnlyOrFullFilesystemAsTmpdirIsExitTwoNeverAFailure) {
  TempDir dir;
  const std::string model = model_in(dir);
  const std::string mnt = (dir / "mnt").string();
  fs::create_directories(mnt);
  if (testing::run_process({"unshare", "-m", "true"}).exit_code != 0) {
    if (::geteuid() == 0) GTEST_SKIP() << "root without mount namespaces: no way to make a folder read-only";
    fs::permissions(mnt, fs::perms::owner_read | fs::perms::owner_exec);
    expect_setup_error(model, mnt, {}, "true", mnt);
    return;
  }
  expect_setup_error(model, mnt, {"unshare", "-m"}, "mount -t tmpfs -o ro,size=64k tmpfs \"$1\" || exit 99", mnt);
  expect_setup_error(model, mnt, {"unshare", "-m"},
                     "mount -t tmpfs -o size=64k tmpfs \"$1\" || exit 99\ndd if=/dev/zero of=\"$1/fill\" bs=4k 2>/dev/null",
                     "No space left on device");
}

// --repeat N: each candidate runs N times and the majority decides. An engine that also fails on
// the first run of any model ("random" failures that do not come back) makes the plain search keep a
// wrong reproducer, which the confirmation catches (exit 6); with --repeat 3 those failures are 1 of
// 3, outvoted, and the reduction ends at the Tanh, confirmed, counting the flaky checks.
TEST(CheckScriptCli, RepeatTakesTheMajorityOfRunsOnAFlakyEngine) {
  TempDir dir;
  const std::string seen = (dir / "random.sh.seen").string();
  const auto s = sighting_script(dir, "random.sh", "grep -aq Tanh \"$1\" || [ \"${SEEN:-0}\" -eq 0 ]");
  const std::string engine = "check:sh " + s + " {model}";
  // It fails on the first sight of any model: the one-node model shows it (exit 7); told to reduce
  // anyway, the confirmation does (exit 6).
  auto plain = run_reduce({model_in(dir), "--engine", engine, "-j", "1", "-o", (dir / "plain").string()});
  EXPECT_EQ(plain.exit_code, 7) << plain.out << plain.err;
  std::filesystem::remove(seen);
  auto anyway = run_reduce({model_in(dir), "--engine", engine, "-j", "1", "-o", (dir / "plain").string(),
                            "--allow-model-independent"});
  EXPECT_EQ(anyway.exit_code, 6) << anyway.out << anyway.err;
  std::filesystem::remove(seen);
  auto r = run_reduce({model_in(dir), "--engine", engine, "-j", "1", "--repeat", "3", "-o", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string report = read_bytes(dir / "out" / "report.json");
  EXPECT_NE(report.find("\"Tanh\": 1"), std::string::npos) << report;
  EXPECT_NE(report.find("\"repeat\": 3"), std::string::npos) << report;
  EXPECT_EQ(report.find("\"flaky\": 0"), std::string::npos) << report;
  EXPECT_NE(r.out.find("flaky: "), std::string::npos) << r.out;
  // `check --repeat`: the count of runs that showed the failure.
  write_bytes(dir / "other.onnxtxt", "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[2] x) => (float[2] y) { y = Relu(x) }\n");
  auto check = run_reduce({"check", (dir / "other.onnxtxt").string(), "--engine", engine, "--repeat", "3"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("FLAKY: 1 of 3 runs show the failure"), std::string::npos) << check.out;
  EXPECT_EQ(run_reduce({"check", model_in(dir), "--engine", engine, "--repeat", "0"}).exit_code, 2);
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

// A misspelt placeholder never reaches the engine as it is (issue 66): exit 2 naming it; text in
// braces that is no placeholder name (JSON) is left alone.
TEST(SlotEnvCli, AnUnknownPlaceholderIsRefused) {
  TempDir dir;
  const auto s = script(dir, "pass.sh", "exit 0\n");
  auto r = run_reduce({"check", model_in(dir), "--engine", "check:sh " + s, "--slot-env", "A={nope}"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--slot-env 'A={nope}': unknown placeholder {nope} (known: {slot}, {rank}, {local_rank})"), std::string::npos)
      << r.err;
  auto json = run_reduce({"check", model_in(dir), "--engine", "check:sh " + s, "--slot-env", "CFG={\"a\": 1}"});
  EXPECT_EQ(json.exit_code, 0) << json.out << json.err;
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

// One build per GPU: with more jobs than slots, a run waits for a free slot, and the slot a run
// holds is given to it both in the template ({slot}, e.g. trtexec --device={slot}) and in the
// --slot-env environment. Each run holds its slot's lock (flock, released when the shell ends, even
// when a cancelled run is killed; its children do not inherit it) while it runs: a run that finds
// the lock taken shares its slot with a run that has not ended. Returns the log's distinct lines.
std::set<std::string> slots_of_runs(const std::vector<std::string>& options, const std::string& slot_word) {
  TempDir dir;
  const auto log = dir / "slots.log";
  const std::string locks = (dir / "lock").string();
  const auto s = script(dir, "slot.sh",
                        "exec 9>>'" + locks + "'\"$2\"\nif ! flock -n 9; then echo shared >> '" + log.string() +
                            "'; fi\necho \"slot $2 $SLOT_DEVICE\" >> '" + log.string() +
                            "'\nsleep 0.05 9>&-\n"
                            "if grep -aq Tanh \"$1\" 9>&-; then exit 1; fi\nexit 0\n");
  std::vector<std::string> args{model_in(dir), "--engine", "check:sh " + s + " {model} " + slot_word, "-j", "4",
                                "-o", (dir / "out").string()};
  args.insert(args.end(), options.begin(), options.end());
  auto r = run_reduce(args);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::istringstream lines(read_bytes(log));
  size_t runs = 0;
  std::set<std::string> seen;
  for (std::string line; std::getline(lines, line); ++runs) seen.insert(line);
  EXPECT_GT(runs, 3u);
  return seen;
}

TEST(SlotEnvCli, NoTwoRunsAtOnceShareASlot) {
  using Lines = std::set<std::string>;
  EXPECT_EQ(slots_of_runs({"--slot-env", "SLOT_DEVICE=gpu{slot}", "--slots", "2"}, "{slot}"),
            (Lines{"slot 0 gpu0", "slot 1 gpu1"}));
  // One GPU: every run on it, one at a time, whatever -j is.
  EXPECT_EQ(slots_of_runs({"--slot-env", "SLOT_DEVICE=gpu{slot}", "--slots", "1"}, "{slot}"), (Lines{"slot 0 gpu0"}));
  // Nothing names the slot: --slots still bounds the runs at once.
  EXPECT_EQ(slots_of_runs({"--slots", "1"}, "one"), (Lines{"slot one "}));
}

}  // namespace
}  // namespace reduce
