// Issue 50 end to end on real npm releases (installed by the CTest fixture through scripts/ort/install.sh,
// offline afterwards): `reduce check --engine ort@A,ort@B,...` gives one verdict line per release and the
// reduction to run; a bug of onnxruntime-node 1.16.3 (ReduceSum over an empty axis keeps the axis empty)
// reduced against 1.30.0 down to the node; a model with a contrib op the interpreter cannot run reduced
// with `--reference ort@1.30.0`; 1.14.0's double free on Pad with a negative axis; float16 refused
// by the releases that cannot pass it (tried on the release); onnxruntime-web's wasm backend (`ort-web`) on an exported model.
#include <gtest/gtest.h>

#include <algorithm>

#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::run_process;
using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

size_t lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A slice that leaves axis 1 empty, then ReduceSum over it: [2,1,3] of zeros by the specification;
// onnxruntime-node up to 1.16.3 returns [2,0,3]. Around it, nodes that every release runs alike.
constexpr char kEmptyAxisChain[] = R"(<ir_version: 8, opset_import: ["" : 13]>
chain (float[2,4,3] x) => (float[2,1,3] y, float[2,4,3] z) {
  a = Relu (x)
  starts = Constant <value = int64[1] {0}> ()
  ax = Constant <value = int64[1] {1}> ()
  e = Slice (a, starts, starts, ax)
  r = ReduceSum <keepdims = 1> (e, ax)
  b = Sigmoid (x)
  m = ReduceMean <keepdims = 1, axes = [1]> (b)
  s = Add (r, m)
  y = Mul (s, m)
  c = Tanh (b)
  z = Mul (a, c)
})";

// The same bug behind com.microsoft.Gelu, which ONNX Runtime runs and reduce's interpreter does not:
// shape inference cannot type what follows it either.
constexpr char kContribChain[] = R"(<ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
contrib (float[2,4,3] x) => (float[2,1,3] y) {
  g = com.microsoft.Gelu (x)
  starts = Constant <value = int64[1] {0}> ()
  ax = Constant <value = int64[1] {1}> ()
  e = Slice (g, starts, starts, ax)
  r = ReduceSum <keepdims = 1> (e, ax)
  m = ReduceMean <keepdims = 1, axes = [1]> (g)
  s = Add (r, m)
  y = Relu (s)
})";

// Pad (opset 18) with axes = [-1]: onnxruntime-node 1.14.0 aborts with a double free.
constexpr char kPadNegativeAxis[] = R"(<ir_version: 8, opset_import: ["" : 18]>
pad (float[2,3] x) => (float[2,5] y) {
  pads = Constant <value = int64[2] {1, 1}> ()
  cv = Constant <value = float {0}> ()
  axes = Constant <value = int64[1] {-1}> ()
  y = Pad <mode = "constant"> (x, pads, cv, axes)
})";

// ReverseSequence with a sequence length of 0: 1.10 to 1.16 reverse that batch entry anyway.
constexpr char kReverseZeroLength[] = R"(<ir_version: 8, opset_import: ["" : 13]>
revseq (float[4,2,3] x) => (float[4,2,3] y) {
  lens = Constant <value = int64[2] {0, 3}> ()
  y = ReverseSequence <batch_axis = 1, time_axis = 0> (x, lens)
})";

// The same ReverseSequence inside both branches of an If on a computed condition (issue 66).
constexpr char kReverseInIf[] = R"(<ir_version: 8, opset_import: ["" : 13]>
revif (float[4,2,3] x) => (float[4,2,3] y) {
  s = ReduceSum <keepdims = 0> (x)
  zero = Constant <value = float {-1000}> ()
  c = Greater (s, zero)
  y = If (c) <
    then_branch = t () => (float[4,2,3] a) {
      lens = Constant <value = int64[2] {0, 3}> ()
      r = ReverseSequence <batch_axis = 1, time_axis = 0> (x, lens)
      a = Relu (r)
    },
    else_branch = e () => (float[4,2,3] b) {
      lens2 = Constant <value = int64[2] {0, 3}> ()
      b = ReverseSequence <batch_axis = 1, time_axis = 0> (x, lens2)
    }
  >
})";

constexpr char kFloat16Relu[] = R"(<ir_version: 8, opset_import: ["" : 13]>
f16 (float16[2,3] x) => (float16[2,3] y) {
  y = Relu (x)
})";

std::string write_model(const TempDir& dir, const std::string& name, const char* text) {
  const std::string file = (dir / (name + ".onnxtxt")).string();
  write_bytes(file, text);
  return file;
}

TEST(OrtReleases, AReleaseListGivesOneVerdictLinePerReleaseAndTheReductionToRun) {
  TempDir dir;
  const std::string model = write_model(dir, "chain", kEmptyAxisChain);
  auto r = run_reduce({"check", model, "--engine", "ort@1.14.0,1.16.3,ort@1.30.0,ort-web"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(lines(r.out), 5u) << r.out;
  const std::string shape = "FAIL (shape: output `y` is float[2,0,3] on the engine, float[2,1,3] on the reference)";
  EXPECT_TRUE(has(r.out, "ort@1.14.0: " + shape + "\n")) << r.out;
  EXPECT_TRUE(has(r.out, "ort@1.16.3: " + shape + "\n")) << r.out;
  EXPECT_TRUE(has(r.out, "ort@1.30.0: PASS\n")) << r.out;
  EXPECT_TRUE(has(r.out, "ort-web: PASS\n")) << r.out;
  EXPECT_TRUE(has(r.out, "fixed: fails up to ort@1.16.3, passes from ort@1.30.0: reduce " + model +
                             " --engine ort@1.16.3 --reference ort@1.30.0 -o chain.reduced\n"))
      << r.out;
}

// The printed reduction keeps the options the user gave (issue 67): pasted as printed, with the same
// inputs (in a folder whose name has a space) and tolerances, it reduces the fixed bug to its ReduceSum.
TEST(OrtReleases, ThePrintedReductionKeepsTheUsersOptionsAndRunsAsPrinted) {
  TempDir dir;
  const std::string model = write_model(dir, "chain", kEmptyAxisChain);
  const fs::path inputs = dir / "my inputs";
  auto saved = run_reduce({"run", model, "--seed", "7", "--save-inputs", inputs.string()});
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  auto r = run_reduce({"check", model, "--engine", "ort@1.16.3,ort@1.30.0", "--inputs", inputs.string(), "--atol", "1e-06",
                       "--rtol", "0", "--diagnose"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string printed = r.out.substr(r.out.find("reduce " + model));
  EXPECT_TRUE(has(printed, " --inputs '" + inputs.string() + "'")) << printed;
  EXPECT_TRUE(has(printed, " --atol 1e-06")) << printed;
  EXPECT_TRUE(has(printed, " --rtol 0")) << printed;
  EXPECT_FALSE(has(printed, "--diagnose")) << printed;  // check's own
  auto pasted = run_process({"sh", "-c", "cd \"$0\" && PATH=\"$1:$PATH\" " + printed.substr(0, printed.find('\n')),
                             dir.path().string(), std::string(REDUCE_BINARY_DIR)});
  EXPECT_EQ(pasted.exit_code, 0) << printed << pasted.out << pasted.err;
  EXPECT_TRUE(has(read_bytes(dir / "chain.reduced" / "report.md"), "ReduceSum x1")) << pasted.out;
}

TEST(OrtReleases, TheReleaseListGoesOnPastACrashAndEndsAtTheFirstChange) {
  TempDir dir;
  const std::string pad = write_model(dir, "pad", kPadNegativeAxis);
  auto r = run_reduce({"check", pad, "--engine", "ort@1.14.0,ort@1.16.3", "--reference", "ort"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "ort@1.14.0: FAIL (crash: signal 6)\n")) << r.out;
  EXPECT_TRUE(has(r.out, "ort@1.16.3: PASS\n")) << r.out;
  EXPECT_TRUE(has(r.out, "fixed: fails up to ort@1.14.0, passes from ort@1.16.3")) << r.out;
  const std::string revseq = write_model(dir, "revseq", kReverseZeroLength);
  auto both = run_reduce({"check", revseq, "--engine", "ort@1.14.0,ort@1.16.3"});
  EXPECT_EQ(both.exit_code, 1) << both.out << both.err;
  EXPECT_TRUE(has(both.out, "ort@1.14.0: FAIL (mismatch")) << both.out;
  EXPECT_TRUE(has(both.out, "ort@1.16.3: FAIL (mismatch")) << both.out;
  EXPECT_TRUE(has(both.out, "every release that ran fails: no passing release to take as the reference")) << both.out;
}

// `reduce MODEL --engine ort@1.16.3 --reference ort@1.30.0`: the bundle's model is the one node that
// differs; it still fails on 1.16.3 against 1.30.0, and the reduction confirmed it on a fresh run.
void expect_reduced_to_the_reduce_sum(const TempDir& dir, const std::string& model) {
  auto r = run_reduce({model, "--engine", "ort@1.16.3", "--reference", "ort@1.30.0", "-j", "2", "-o",
                       (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "(ReduceSum x1), 1-minimal")) << r.out;
  const std::string report = read_bytes(dir / "out" / "report.json");
  EXPECT_TRUE(has(report, "\"one_minimal\": true")) << report;
  EXPECT_TRUE(has(report, "\"reference\": \"ort@1.30.0\"")) << report;
  EXPECT_TRUE(has(r.out, "confirmed: ")) << r.out;  // every fresh run failed the same way (confirm_runs_for)
  EXPECT_FALSE(has(r.out, "NOT CONFIRMED")) << r.out;
  auto info = run_reduce({"info", (dir / "out" / "model.onnx").string()});
  EXPECT_TRUE(has(info.out, "nodes: 1 (")) << info.out;
  EXPECT_TRUE(has(info.out, "  ReduceSum: 1\n")) << info.out;
  auto check = run_reduce({"check", (dir / "out" / "model.onnx").string(), "--inputs", (dir / "out" / "inputs").string(),
                           "--engine", "ort@1.16.3", "--reference", "ort@1.30.0"});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_TRUE(has(check.out, "verdict: FAIL (shape)")) << check.out;
  EXPECT_TRUE(has(read_bytes(dir / "out" / "repro.mjs"), "npm install onnxruntime-node@1.16.3"));
}

TEST(OrtReleases, AnOldReleaseReducesAgainstANewOneToTheNodeThatDiffers) {
  TempDir dir;
  expect_reduced_to_the_reduce_sum(dir, write_model(dir, "chain", kEmptyAxisChain));
}

TEST(OrtReleases, AModelTheInterpreterCannotRunReducesAgainstTheNewRelease) {
  TempDir dir;
  const std::string model = write_model(dir, "contrib", kContribChain);
  auto refused = run_reduce({"check", model, "--engine", "ort@1.16.3"});
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_TRUE(has(refused.err, "unsupported operator com.microsoft.Gelu")) << refused.err;
  EXPECT_TRUE(has(refused.err, "--reference ENGINE that runs it")) << refused.err;
  expect_reduced_to_the_reduce_sum(dir, model);
}

// Whether a release passes float16 tensors to JavaScript is tried on the release itself (issue 67):
// 1.16.3 refuses them, and so does 1.17.3, after the version number said it would not; the refusal
// is the tool's limit in a single check and "cannot take" in a list of releases, never a failure.
TEST(OrtReleases, Float16IsRefusedByTheReleasesThatCannotPassItAsTheirLimit) {
  TempDir dir;
  const std::string model = write_model(dir, "f16", kFloat16Relu);
  for (const char* old_release : {"ort@1.16.3", "ort@1.17.3"}) {
    auto old = run_reduce({"check", model, "--engine", old_release, "--reference", "ort"});
    EXPECT_EQ(old.exit_code, 2) << old.out << old.err;
    EXPECT_TRUE(has(old.out, "verdict: INVALID (not the engine's failure: onnxruntime-node " + std::string(old_release + 4) +
                             " cannot pass float16 tensors to JavaScript (tried once: "))
        << old.out;
    EXPECT_TRUE(has(old.out, "): input 'x' is float16; use another release)")) << old.out;
    EXPECT_TRUE(has(old.out, "note: the engine's release cannot take this model (its JavaScript binding cannot pass float16 "
                             "tensors): a limit of the release, not a wrong answer"))
        << old.out;
  }
  // The answer is kept in the release's folder: asked again, the release is not tried again.
  EXPECT_TRUE(has(read_bytes(fs::path(REDUCE_ORT_DIR).parent_path() / "ort-1.17.3" / "FLOAT16"), "onnxruntime-node 1.17.3\n"));
  for (const char* spec : {"ort@1.30.0", "ort-web"}) {
    auto now = run_reduce({"check", model, "--engine", spec, "--reference", "ref"});
    EXPECT_EQ(now.exit_code, 0) << spec << ": " << now.out << now.err;
  }
  auto scan = run_reduce({"check", model, "--engine", "ort@1.16.3,ort@1.17.3,ort@1.30.0", "--reference", "ref"});
  EXPECT_EQ(scan.exit_code, 0) << scan.out << scan.err;
  EXPECT_TRUE(has(scan.out, "ort@1.17.3: CANNOT TAKE (its JavaScript binding cannot pass float16 tensors)\n")) << scan.out;
  EXPECT_TRUE(has(scan.out, "support added: ort@1.17.3 cannot take it (its JavaScript binding cannot pass float16 tensors), "
                            "ort@1.30.0 runs it (and passes)\n"))
      << scan.out;
  EXPECT_FALSE(has(scan.out, "FAIL")) << scan.out;
}

TEST(OrtReleases, AReleaseThatIsNotInstalledOrCannotBeIsOneLine) {
  TempDir dir;
  const std::string model = write_model(dir, "pad", kPadNegativeAxis);
  // Not a release: refused before anything is installed.
  auto bad = run_reduce({"check", model, "--engine", "ort@1.x"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_EQ(lines(bad.err), 1u) << bad.err;
  EXPECT_TRUE(has(bad.err, "--engine: ort@1.x: '1.x' is not a release number")) << bad.err;
  // onnxruntime-node 1.8.0 fetched its binary in an install script (prebuild-install): refused in one
  // line; the first run asks npm for the package (3 MB), later ones read the refusal from its folder.
  for (int k = 0; k < 2; ++k) {
    auto offline = run_reduce({"check", model, "--engine", "ort@1.8.0"});
    EXPECT_EQ(offline.exit_code, 2) << offline.out << offline.err;
    // One error line; the first run also says it installs (issue 66), later ones do not.
    const std::string installing = "note: ort@1.8.0: installing onnxruntime-node@1.8.0 from npm into ";
    EXPECT_EQ(lines(offline.err), has(offline.err, installing) ? 2u : 1u) << offline.err;
    if (k == 1) EXPECT_FALSE(has(offline.err, installing)) << offline.err;
    EXPECT_TRUE(has(offline.err, "error: ort@1.8.0: onnxruntime-node@1.8.0: its npm package has no binary for "))
        << offline.err;
    EXPECT_TRUE(has(offline.err, "; its install script (prebuild-install -r napi"))
        << offline.err;
    EXPECT_TRUE(has(offline.err, "so this release cannot be used offline")) << offline.err;
  }
  // A cache it cannot write: the reason, in one line (not "install.sh exit code 1").
  auto readonly = run_process({"env", "REDUCE_ORT_DIR=/proc/no-such/ort", std::string(REDUCE_BINARY_DIR) + "/reduce", "check",
                               model, "--engine", "ort@1.16.3"});
  EXPECT_EQ(readonly.exit_code, 2) << readonly.out << readonly.err;
  EXPECT_TRUE(has(readonly.err, "error: ort@1.16.3: /proc/no-such/ort-1.16.3: cannot write the folder for onnxruntime-node@1.16.3"))
      << readonly.err;
  // A list is for check only.
  auto list = run_reduce({model, "--engine", "ort@1.14.0,ort@1.16.3", "-o", (dir / "out").string()});
  EXPECT_EQ(list.exit_code, 2) << list.err;
  EXPECT_TRUE(has(list.err, "a list of releases (ort@A,ort@B,...) is for `reduce check`")) << list.err;
}

// onnxruntime-web 1.30's wasm backend on PyTorch exports, against onnxruntime-node 1.30 as the
// reference: the verdict, with the web build's threads and optimization level, float16 included.
TEST(OrtReleases, OrtWebGivesAVerdictOnExportedModels) {
  const std::string exported = std::string(REDUCE_SHARED_FIXTURES) + "/exported/";
  if (!std::filesystem::exists(exported)) GTEST_SKIP() << exported << " is not there";
  const std::pair<const char*, const char*> cases[] = {{"mobilenetv3_dynamo", "ort-web"},
                                                       {"mobilenetv3_dynamo", "ort-web:opt=disable,threads=2"},
                                                       {"bert_fp16_dynamo", "ort-web"}};
  for (const auto& [model, spec] : cases) {
    const std::string folder = exported + model;
    auto r = run_reduce({"check", folder + "/model.onnx", "--inputs", folder + "/test_data_set_0", "--engine", spec,
                         "--reference", "ort"});
    EXPECT_EQ(r.exit_code, 0) << model << " " << spec << ": " << r.out << r.err;
    EXPECT_TRUE(has(r.out, std::string("engine: ") + spec + "  reference: ort")) << r.out;
    EXPECT_TRUE(has(r.out, "verdict: PASS")) << r.out;
  }
}

// With a check: engine (pass or fail by exit status), a candidate ONNX Runtime refuses would count as
// the failure: reducing the If's branches once left one returning x directly ("an outer scope value
// being returned directly"), and the reduction ended at Greater + If with empty branches, failing on
// the fixed release too. A branch output now goes through an Identity, so the reproducer keeps the
// ReverseSequence that 1.16.3 gets wrong, and it passes on 1.30.
TEST(OrtReleases, ACheckScriptReductionOfAnIfKeepsTheNodeTheReleaseGetsWrong) {
  TempDir dir;
  const std::string model = write_model(dir, "revif", kReverseInIf);
  const std::string reduce_bin = std::string(REDUCE_BINARY_DIR) + "/reduce";
  const std::string engine = "check:" + reduce_bin + " check {model} --engine ort@1.16.3 --inputs {inputs}";
  auto r = run_reduce({model, "--engine", engine, "-o", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string report = read_bytes(dir / "out" / "report.md");
  EXPECT_TRUE(has(report, "ReverseSequence")) << report;
  auto fixed = run_reduce({"check", (dir / "out" / "model.onnx").string(), "--engine", "ort", "--inputs",
                           (dir / "out" / "inputs").string()});
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out << fixed.err;
  auto buggy = run_reduce({"check", (dir / "out" / "model.onnx").string(), "--engine", "ort@1.16.3", "--inputs",
                           (dir / "out" / "inputs").string()});
  EXPECT_EQ(buggy.exit_code, 1) << buggy.out << buggy.err;
}

}  // namespace
}  // namespace reduce
