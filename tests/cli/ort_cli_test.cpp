// `--engine ort` and `--reference ort` end to end: the real npm models pass against the reference
// (the inputs of OrtCrossCheck), ONNX Runtime's optimizer against itself, a corpus model reduced with
// OpenCV against ONNX Runtime, and the failures a user meets (crash, timeout, no installation, bad spec).
#include <gtest/gtest.h>

#include <cstdlib>

#include "adapters/engine_spec.h"
#include "process_support.h"

namespace reduce {
namespace {

using testing::read_bytes;
using testing::run_process;
using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

std::string model(const std::string& file) {
  const char* env = std::getenv("REDUCE_MODEL_CACHE");
  return (env ? std::string(env) : std::string(REDUCE_SOURCE_DIR) + "/.cache/models") + "/" + file;
}

// `reduce ARGS...` with extra environment entries (through env(1): no shell).
testing::ProcessRun run_reduce_with(const std::vector<std::string>& env, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(std::string(REDUCE_BINARY_DIR) + "/reduce");
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv);
}

size_t lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

struct RealModel {
  std::string label, file;
  std::vector<std::string> options;  // shapes and ranges of OrtCrossCheck (tests/adapters/ort_crosscheck_test.cpp)
};

void PrintTo(const RealModel& c, std::ostream* os) { *os << c.label; }

class OrtCheck : public ::testing::TestWithParam<RealModel> {};

// The inputs are made by `reduce run` with the cross-check's seed, shapes and ranges and given with
// --inputs, so that ONNX Runtime gets the model as published, as in the cross-check (--input-shape
// would declare the shapes in the model: see SileroVadWithDeclaredInputShapesIsRefused).
TEST_P(OrtCheck, PassesAgainstTheReference) {
  const RealModel& c = GetParam();
  TempDir dir;
  std::vector<std::string> run{"run", model(c.file), "--seed", "2026", "--save-inputs", (dir / "inputs").string()};
  run.insert(run.end(), c.options.begin(), c.options.end());
  auto inputs = run_reduce(run);
  ASSERT_EQ(inputs.exit_code, 0) << inputs.out << inputs.err;
  auto r = run_reduce({"check", model(c.file), "--engine", "ort", "--inputs", (dir / "inputs").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("engine: ort  reference: ref"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    RealModels, OrtCheck,
    ::testing::Values(RealModel{"ppocr_det", "ppocr_det.onnx", {"--input-shape", "x:1x3x64x64"}},
                      RealModel{"ppocr_rec", "ppocr_rec.onnx", {"--input-shape", "x:1x3x48x320"}},
                      RealModel{"ppocr_cls", "ppocr_cls.onnx", {"--input-shape", "x:1x3x48x192"}},
                      RealModel{"oww_hello_deepa", "oww_hello_deepa.onnx", {}},
                      RealModel{"oww_hello_deepa_old", "oww_hello_deepa_old.onnx", {}},
                      RealModel{"oww_namaste_deepa", "oww_namaste_deepa.onnx", {}},
                      RealModel{"silero_vad_v5",
                                "silero_vad_v5.onnx",
                                {"--input-shape", "input:1x512", "--input-shape", "state:2x1x128", "--input-range",
                                 "state:0,0", "--input-range", "sr:16000,16000"}}),
    [](const auto& info) { return info.param.label; });

// Pinned behaviour of ONNX Runtime 1.30: with its inputs declared static ([1,512], [2,1,128]), Silero
// VAD v5 fails to load: shape inference inside the If branches conflicts with the model's own value infos.
TEST(OrtCli, SileroVadWithDeclaredInputShapesIsRefused) {
  auto r = run_reduce({"check", model("silero_vad_v5.onnx"), "--engine", "ort", "--seed", "2026", "--input-shape",
                       "input:1x512", "--input-shape", "state:2x1x128", "--input-range", "state:0,0", "--input-range",
                       "sr:16000,16000"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: FAIL (error)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ONNX Runtime: Node (If_0) Op (If) [TypeInferenceError] Graph attribute inferencing failed: Node "
                       "(_if_then_branch_LSTM) Op (LSTM) [ShapeInferenceError] First input tensor must have rank 3"),
            std::string::npos)
      << r.out;
}

// ONNX Runtime writes `.ses` and `mat-debug-PID.log` into TMPDIR; they go into the worker's own
// folder, removed with it: a check leaves TMPDIR as it found it.
TEST(OrtCli, ACheckLeavesNothingInTmpdir) {
  TempDir dir;
  std::filesystem::create_directories(dir / "tmp");
  auto r = run_reduce_with({"TMPDIR=" + (dir / "tmp").string()},
                           {"check", model("oww_hello_deepa.onnx"), "--engine", "ort", "--seed", "2026"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir / "tmp")) left.push_back(e.path().filename().string());
  EXPECT_TRUE(left.empty()) << left.size() << " left, the first: " << (left.empty() ? "" : left[0]);
}

TEST(OrtCli, TheOptimizerAgainstItselfOnPpOcrRec) {
  auto r = run_reduce({"check", model("ppocr_rec.onnx"), "--engine", "ort", "--reference", "ort:opt=disable",
                       "--input-shape", "x:1x3x48x320", "--seed", "2026"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("engine: ort  reference: ort:opt=disable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
}

TEST(OrtCli, RunPrintsTheSameOutputsTwice) {
  TempDir dir;
  std::string saved[2];
  for (int k = 0; k < 2; ++k) {
    const auto out = dir / ("out" + std::to_string(k));
    auto r = run_reduce({"run", model("ppocr_cls.onnx"), "--engine", "ort", "--input-shape", "x:1x3x48x192",
                         "--save-outputs", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    saved[k] = read_bytes(out / "output_0.pb");
    EXPECT_FALSE(saved[k].empty());
  }
  EXPECT_EQ(saved[0], saved[1]);
}

// OpenCV 4.6 cannot run the corpus's Cast model (an assertion in total()); ONNX Runtime is the reference.
TEST(OrtCli, ACorpusModelReducesWithOpenCvAgainstOnnxRuntime) {
  if (!make_engine("opencv-inprocess").ok()) GTEST_SKIP() << "OpenCV is not built in";
  TempDir dir;
  auto corpus = run_process({std::string(REDUCE_BINARY_DIR) + "/reduce-corpus", (dir / "corpus").string(), "--sizes",
                             "10", "--faults", "cast-fp16-conflict"});
  ASSERT_EQ(corpus.exit_code, 0) << corpus.err;
  const std::string file = (dir / "corpus" / "cast_fp16_transformer_10.onnx").string();
  auto r = run_reduce({file, "--engine", "opencv", "--reference", "ort", "-j", "2", "-o", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string report = read_bytes(dir / "out" / "report.json");
  EXPECT_NE(report.find("\"reference\": \"ort\""), std::string::npos) << report;
  EXPECT_NE(report.find("\"one_minimal\": true"), std::string::npos) << report;
  // The reproducer still fails on OpenCV, checked against ONNX Runtime.
  auto check = run_reduce({"check", (dir / "out" / "model.onnx").string(), "--engine", "opencv", "--reference", "ort",
                           "--inputs", (dir / "out" / "inputs").string()});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE(check.out.find("FAIL (error)"), std::string::npos) << check.out;
  // OpenCV's assertion in total() comes down to one Mul node (as on PP-OCR rec, docs/engine.md).
  auto info = run_reduce({"info", (dir / "out" / "model.onnx").string()});
  EXPECT_NE(info.out.find("nodes: 1 ("), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("  Mul: 1\n"), std::string::npos) << info.out;
}

// (A restart inside one engine, the same prepared model running again, is in ort_engine_test.cpp.)
TEST(OrtCli, AnAbortingWorkerIsACrashVerdictAndTheNextCheckPasses) {
  TempDir dir;
  const auto trigger = dir / "crash";
  write_bytes(trigger, "");
  const std::vector<std::string> env{"REDUCE_ORT_WORKER_CRASH_FILE=" + trigger.string()};
  const std::vector<std::string> check{"check", model("ppocr_cls.onnx"), "--engine", "ort", "--input-shape", "x:1x3x48x192"};
  auto crashed = run_reduce_with(env, check);
  EXPECT_EQ(crashed.exit_code, 1) << crashed.out << crashed.err;
  EXPECT_NE(crashed.out.find("verdict: FAIL (crash)"), std::string::npos) << crashed.out;
  EXPECT_NE(crashed.out.find("the ONNX Runtime worker killed by SIGABRT"), std::string::npos) << crashed.out;
  EXPECT_FALSE(std::filesystem::exists(trigger));  // the hook fired once
  auto passes = run_reduce_with(env, check);
  EXPECT_EQ(passes.exit_code, 0) << passes.out << passes.err;
  EXPECT_NE(passes.out.find("verdict: PASS"), std::string::npos) << passes.out;
}

TEST(OrtCli, AHangingWorkerIsATimeoutVerdict) {
  TempDir dir;
  const auto trigger = dir / "hang";
  write_bytes(trigger, "");
  auto r = run_reduce_with({"REDUCE_ORT_WORKER_HANG_FILE=" + trigger.string()},
                           {"check", model("ppocr_cls.onnx"), "--engine", "ort", "--input-shape", "x:1x3x48x192",
                            "--timeout", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: FAIL (timeout)"), std::string::npos) << r.out;
}

TEST(OrtCli, AMissingInstallationIsExitTwoWithOneLine) {
  auto r = run_reduce_with({"REDUCE_ORT_DIR=/nonexistent/ort"},
                           {"check", model("ppocr_cls.onnx"), "--engine", "ort", "--input-shape", "x:1x3x48x192"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/ort"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unset REDUCE_ORT_DIR"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("verdict"), std::string::npos) << r.out;
}

TEST(OrtCli, BadOptionsAreExitTwoWithOneLine) {
  for (const char* spec : {"ort:opt=fast", "ort:threads=many", "ort:ep=tpu", "ort:fp16", "isolated:ort"}) {
    auto r = run_reduce({"check", model("ppocr_cls.onnx"), "--engine", spec});
    EXPECT_EQ(r.exit_code, 2) << spec << ": " << r.out << r.err;
    EXPECT_EQ(lines(r.err), 1u) << spec << ": " << r.err;
    EXPECT_NE(r.err.find(std::string("--engine: ") + spec + ": "), std::string::npos) << r.err;
  }
  auto reference = run_reduce({"check", model("ppocr_cls.onnx"), "--engine", "ort", "--reference", "ort:opt=fast"});
  EXPECT_EQ(reference.exit_code, 2) << reference.err;
  EXPECT_NE(reference.err.find("--reference: ort:opt=fast: unknown optimization level 'fast'"), std::string::npos)
      << reference.err;
}

}  // namespace
}  // namespace reduce
