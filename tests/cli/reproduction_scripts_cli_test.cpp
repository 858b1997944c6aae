// The bundle's scripts give the maintainer's verdict (issue 65; docs/reference.md, "Reproduction
// scripts"): 1 the engine fails the way reduce recorded, 0 it passes (the release or program that
// fixed it), 3 it fails another way, 2 it cannot run here. Run as a maintainer would, on real
// engines: onnxruntime-node 1.16.3 against 1.30 (repro.mjs), a cmd: engine that writes
// output_K.npy through a program named by a relative path, a check: script with --fail-regex, and
// reduce's own engine at tight tolerances.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::run_process;
using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string reduce_binary() { return std::string(REDUCE_BINARY_DIR) + "/reduce"; }

// A bundle's repro.sh as a maintainer on Debian runs it: python3 with numpy (python3-numpy from
// scripts/setup.sh; a python3 earlier on PATH, e.g. pyenv's, may lack it).
testing::ProcessRun run_script(const fs::path& script) {
  return run_process({"env", "PATH=/usr/bin:/bin", "sh", script.string()});
}

// onnxruntime-node `release` as reduce installs it beside REDUCE_ORT_DIR (1.30.0 is REDUCE_ORT_DIR).
std::string node_modules(const std::string& release) {
  const fs::path dir = release == "1.30.0" ? fs::path(REDUCE_ORT_DIR) : fs::path(REDUCE_ORT_DIR).parent_path() / ("ort-" + release);
  return (dir / "node_modules").string();
}

testing::ProcessRun run_in(const fs::path& dir, std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"sh", "-c", "cd \"$0\" && exec \"$@\"", dir.string()});
  return run_process(argv);
}

// A slice that leaves axis 1 empty, then ReduceSum over it: [2,1,3] of zeros by the specification;
// onnxruntime-node up to 1.16.3 returns [2,0,3], 1.30 is right.
constexpr char kEmptyAxis[] = R"(<ir_version: 8, opset_import: ["" : 13]>
chain (float[2,4,3] x) => (float[2,1,3] y) {
  a = Relu (x)
  starts = Constant <value = int64[1] {0}> ()
  ax = Constant <value = int64[1] {1}> ()
  e = Slice (a, starts, starts, ax)
  r = ReduceSum <keepdims = 1> (e, ax)
  y = Sigmoid (r)
})";

TEST(ReproductionScripts, ReproMjsFailsOnTheBuggyReleasePassesOnTheFixedOneAndCannotRunWithoutIt) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", kEmptyAxis);
  const fs::path out = dir / "out";
  auto r = run_reduce({(dir / "m.onnxtxt").string(), "--engine", "ort@1.16.3", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
  EXPECT_EQ(report["engine_release"], "onnxruntime-node 1.16.3 (cpu)") << report.dump();
  EXPECT_FALSE(report["reduce_version"].get<std::string>().empty());
  auto node = [&](const std::string& node_path) {
    return run_process({"env", "NODE_PATH=" + node_path, "node", (out / "repro.mjs").string()});
  };
  auto buggy = node(node_modules("1.16.3"));
  EXPECT_EQ(buggy.exit_code, 1) << buggy.out << buggy.err;
  EXPECT_TRUE(has(buggy.out, "engine: onnxruntime-node 1.16.3")) << buggy.out;
  EXPECT_TRUE(has(buggy.out, "FAILS as reduce recorded (shape)")) << buggy.out;
  auto fixed = node(node_modules("1.30.0"));
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out << fixed.err;
  EXPECT_TRUE(fixed.out.starts_with("NOTE: this runs onnxruntime-node 1.30.0; reduce found the failure on onnxruntime-node 1.16.3"))
      << fixed.out;
  auto missing = node((dir / "nowhere").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.out << missing.err;
  EXPECT_TRUE(has(missing.out, "CANNOT RUN: onnxruntime-node cannot be found")) << missing.out;
  // Pasted alone: the script carries the model and its data.
  fs::create_directories(dir / "pasted");
  write_bytes(dir / "pasted" / "repro.mjs", read_bytes(out / "repro.mjs"));
  EXPECT_TRUE(report["reproducer"]["standalone"].get<bool>()) << report.dump();
  auto alone = run_process({"env", "NODE_PATH=" + node_modules("1.16.3"), "node", (dir / "pasted" / "repro.mjs").string()});
  EXPECT_EQ(alone.exit_code, 1) << alone.out << alone.err;
  // issue.md: ONNX Runtime's bug template, in its order, the script inline.
  const std::string issue = read_bytes(out / "issue.md");
  const size_t describe = issue.find("### Describe the issue"), reproduce = issue.find("### To reproduce"),
               version = issue.find("### ONNX Runtime Version or Commit ID\n\nonnxruntime-node 1.16.3"),
               provider = issue.find("### Execution Provider\n\nDefault CPU");
  EXPECT_TRUE(describe < reproduce && reproduce < version && version < provider) << issue;
  EXPECT_TRUE(has(issue, "```js\n// The failure reduce found")) << issue;
  // Another failure: a model file the engine refuses is not the recorded wrong shape.
  write_bytes(out / "model.onnx", "not a model");
  auto other = node(node_modules("1.16.3"));
  EXPECT_EQ(other.exit_code, 3) << other.out << other.err;
  EXPECT_TRUE(has(other.out, "FAILS ANOTHER WAY (error)")) << other.out;
  // The script's own failure (a data file it cannot read) is never a verdict on the engine.
  write_bytes(out / "expected" / "output_0.pb", "\x0a\x7f");
  auto unreadable = node(node_modules("1.16.3"));
  EXPECT_EQ(unreadable.exit_code, 2) << unreadable.out << unreadable.err;
  EXPECT_TRUE(has(unreadable.out, "CANNOT RUN: the script could not judge the run")) << unreadable.out;
}

// The same bug in onnxruntime-web 1.16.3's wasm build (fixed in 1.30.0): the web bundle's repro.mjs
// loads onnxruntime-web, names it, and gives the same verdicts.
TEST(ReproductionScripts, AnOnnxruntimeWebBundleFailsOnItsReleaseAndPassesOnTheFixedOne) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", kEmptyAxis);
  const fs::path out = dir / "out";
  auto r = run_reduce({(dir / "m.onnxtxt").string(), "--engine", "ort-web@1.16.3", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
  EXPECT_TRUE(has(report["engine_release"].get<std::string>(), "onnxruntime-web 1.16.3")) << report.dump();
  const fs::path releases = fs::path(REDUCE_ORT_DIR).parent_path();
  auto node = [&](const fs::path& node_path) {
    return run_process({"env", "PATH=/usr/bin:/bin", "NODE_PATH=" + node_path.string(), "node", (out / "repro.mjs").string()});
  };
  auto buggy = node(releases / "ort-web-1.16.3" / "node_modules");
  EXPECT_EQ(buggy.exit_code, 1) << buggy.out << buggy.err;
  EXPECT_TRUE(has(buggy.out, "FAILS as reduce recorded (shape)")) << buggy.out;
  auto fixed = node(releases / "ort-web" / "node_modules");
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out << fixed.err;
  EXPECT_TRUE(has(fixed.out, "NOTE: this runs onnxruntime-web 1.30.0")) << fixed.out;
  auto missing = node(dir / "nowhere");
  EXPECT_EQ(missing.exit_code, 2) << missing.out << missing.err;
  EXPECT_TRUE(has(missing.out, "CANNOT RUN: onnxruntime-web cannot be found")) << missing.out;
}

// A cmd: engine named by a relative path (run from the user's folder) that writes output_K.npy:
// `reduce run` on the optimized engine with a fault, as a stand-in for a user's own engine program.
TEST(ReproductionScripts, ACommandEngineBundleCarriesItsProgramAndReadsOutputKNpy) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", testing::kBroadcastChain);
  write_bytes(dir / "eng.sh", "exec " + reduce_binary() +
                                  " run \"$1\" --engine opt:fault=broadcast-batch1 --inputs \"$2\" --save-outputs \"$3\" "
                                  "--save-format npy > /dev/null\n");
  auto r = run_in(dir.path(), {reduce_binary(), "m.onnxtxt", "--engine", "cmd:sh ./eng.sh {model} {inputs} {outputs}", "-o", "out"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path out = dir / "out";
  ASSERT_TRUE(fs::exists(out / "engine" / "eng.sh"));
  // Run from elsewhere, as a maintainer would: the program comes from the bundle.
  auto fails = run_script(out / "repro.sh");
  EXPECT_EQ(fails.exit_code, 1) << fails.out << fails.err;
  EXPECT_TRUE(has(fails.out, "FAILS as reduce recorded (mismatch)")) << fails.out;
  const std::string program = read_bytes(out / "engine" / "eng.sh");
  std::string fixed = program;
  fixed.replace(fixed.find("opt:fault=broadcast-batch1"), 26, "opt");
  write_bytes(out / "engine" / "eng.sh", fixed);
  auto passes = run_script(out / "repro.sh");
  EXPECT_EQ(passes.exit_code, 0) << passes.out << passes.err;
  EXPECT_TRUE(has(passes.out, "PASSES")) << passes.out;
  write_bytes(out / "engine" / "eng.sh", "echo 'engine: cannot allocate the workspace' >&2\nexit 4\n");
  auto other = run_script(out / "repro.sh");
  EXPECT_EQ(other.exit_code, 3) << other.out << other.err;
  EXPECT_TRUE(has(other.out, "FAILS ANOTHER WAY (error)")) << other.out;
  fs::remove(out / "engine" / "eng.sh");
  auto gone = run_script(out / "repro.sh");
  EXPECT_EQ(gone.exit_code, 2) << gone.out << gone.err;
  EXPECT_TRUE(has(gone.out, "CANNOT RUN")) << gone.out;
}

// A check: script named by a relative path, with --fail-regex: the verdict is the regex's, as it
// was for reduce (the script exits 0 whether or not it prints the assertion).
TEST(ReproductionScripts, ACheckScriptBundleAppliesTheFailRegex) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", testing::kBroadcastChain);
  write_bytes(dir / "build.sh", "grep -q Mul \"$1\" && echo 'Assertion failed: Mul layer precision'\nexit 0\n");
  auto r = run_in(dir.path(), {reduce_binary(), "m.onnxtxt", "--engine", "check:sh ./build.sh {model}", "--fail-regex",
                        "Assertion.*Mul", "-o", "out"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path out = dir / "out";
  // report.md's `reduce check` line runs from the bundle: the script where the bundle carries it.
  EXPECT_TRUE(has(read_bytes(out / "report.md"), "--engine 'check:sh engine/build.sh {model}' --inputs inputs --fail-regex "
                                                  "'Assertion.*Mul'"))
      << read_bytes(out / "report.md");
  auto fails = run_script(out / "repro.sh");
  EXPECT_EQ(fails.exit_code, 1) << fails.out << fails.err;
  write_bytes(out / "engine" / "build.sh", "echo 'built'\nexit 0\n");
  auto passes = run_script(out / "repro.sh");
  EXPECT_EQ(passes.exit_code, 0) << passes.out << passes.err;
  write_bytes(out / "engine" / "build.sh", "kill -SEGV $$\n");
  auto crash = run_script(out / "repro.sh");
  EXPECT_EQ(crash.exit_code, 3) << crash.out << crash.err;
  EXPECT_TRUE(has(crash.out, "FAILS ANOTHER WAY (crash)")) << crash.out;
}

// A check: script without a regex: the same failing exit code is the recorded failure; another is not.
TEST(ReproductionScripts, ACheckScriptsOtherExitCodeIsAnotherFailure) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", testing::kBroadcastChain);
  write_bytes(dir / "build.sh", "grep -q Mul \"$1\" && exit 3\nexit 0\n");
  auto r = run_in(dir.path(), {reduce_binary(), "m.onnxtxt", "--engine", "check:sh ./build.sh {model}", "-o", "out"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path out = dir / "out";
  auto fails = run_script(out / "repro.sh");
  EXPECT_EQ(fails.exit_code, 1) << fails.out << fails.err;
  write_bytes(out / "engine" / "build.sh", "exit 9\n");
  auto other = run_script(out / "repro.sh");
  EXPECT_EQ(other.exit_code, 3) << other.out << other.err;
}

// reduce's own engine at tolerances tighter than the defaults: repro.sh checks at those.
TEST(ReproductionScripts, ReduceCheckLineCarriesTheTolerancesOfTheReduction) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", testing::kSquareNorm);
  const fs::path out = dir / "out";
  auto r = run_reduce({(dir / "m.onnxtxt").string(), "--engine", "opt:fp16", "--atol", "1e-6", "--rtol", "0", "-o", out.string()});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 8) << r.out << r.err;
  const std::string script = read_bytes(out / "repro.sh");
  EXPECT_TRUE(has(script, "--atol 1e-06 --rtol 0.0")) << script;
  const std::string path = "PATH=" + std::string(REDUCE_BINARY_DIR) + ":/usr/bin:/bin";
  auto fails = run_process({"env", path, "sh", (out / "repro.sh").string()});
  EXPECT_EQ(fails.exit_code, 1) << fails.out << fails.err;
  auto no_reduce = run_process({"env", "PATH=/usr/bin:/bin", "sh", (out / "repro.sh").string()});
  EXPECT_EQ(no_reduce.exit_code, 2) << no_reduce.out << no_reduce.err;
}

}  // namespace
}  // namespace reduce
