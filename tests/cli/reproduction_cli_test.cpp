// Bundles that stand on their own (issue 47): the model as the engine ran it (model_fp16.onnx for a
// typed engine) fails on the inner engine as it is, and the engine's own scripts (repro.py,
// repro.mjs, repro.sh) reproduce the failure without reduce.
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

// Debian's interpreter, with python3-numpy and python3-opencv from scripts/setup.sh (a python3
// earlier on PATH, e.g. pyenv's, may lack them).
const char* kPython = "/usr/bin/python3";

// Double Erf: ONNX Runtime 1.30 has no such kernel (a real refusal, reduced to the Erf).
const char* kDoubleErf = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (double[2, 4] X) => (double[2, 4] Y)
{
  a = Abs(X)
  b = Erf(a)
  c = Neg(b)
  Y = Abs(c)
}
)";

nlohmann::json report_of(const fs::path& bundle) { return nlohmann::json::parse(read_bytes(bundle / "report.json")); }

// The 2-node overflow of kSquareNorm reduced on `engine` into DIR/out (FP16 rounding: exit 8).
fs::path reduce_square_norm(const TempDir& dir, const std::string& engine) {
  write_bytes(dir / "m.onnxtxt", testing::kSquareNorm);
  auto r = run_reduce({(dir / "m.onnxtxt").string(), "--engine", engine, "-o", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 8) << r.out << r.err;
  return dir / "out";
}

TEST(Reproduction, ATypedEnginesBundleHoldsTheConvertedModelThatFailsOnTheInnerEngineAsItIs) {
  TempDir dir;
  const fs::path out = reduce_square_norm(dir, "fp16:ref");
  const auto report = report_of(out);
  EXPECT_EQ(report["reproducer"]["model"], "model_fp16.onnx") << report.dump();
  EXPECT_EQ(report["reproducer"]["engine"], "ref") << report.dump();
  ASSERT_TRUE(fs::exists(out / "model_fp16.onnx"));
  // The converted file fails on `ref` itself; the FP32 model.onnx passes there and fails on fp16:ref.
  auto converted = run_reduce({"check", (out / "model_fp16.onnx").string(), "--engine", "ref", "--inputs",
                               (out / "inputs").string(), "--expected", (out / "expected").string()});
  EXPECT_EQ(converted.exit_code, 1) << converted.out << converted.err;
  auto fp32 = run_reduce({"check", (out / "model.onnx").string(), "--engine", "ref", "--inputs", (out / "inputs").string(),
                          "--expected", (out / "expected").string()});
  EXPECT_EQ(fp32.exit_code, 0) << fp32.out << fp32.err;  // passes
  const std::string md = read_bytes(out / "report.md");
  EXPECT_NE(md.find("**Reproduce:** `model_fp16.onnx`"), std::string::npos) << md;
}

TEST(Reproduction, AnEngineThatRunsModelsAsTheyAreKeepsModelOnnxAsTheReproducer) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", testing::kBroadcastChain);
  auto r = run_reduce({(dir / "m.onnxtxt").string(), "--engine", "opt:fault=broadcast-batch1", "-o", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = report_of(dir / "out");
  EXPECT_EQ(report["reproducer"]["model"], "model.onnx");
  EXPECT_FALSE(fs::exists(dir / "out" / "model_fp16.onnx"));
  // reduce's own engines: repro.sh is the `reduce check` line, and it fails.
  EXPECT_EQ(report["reproducer"]["scripts"], nlohmann::json::array({"repro.sh"})) << report.dump();
  auto repro = run_process({"env", "PATH=" + std::string(REDUCE_BINARY_DIR) + ":/usr/bin:/bin", "sh", (dir / "out" / "repro.sh").string()});
  EXPECT_EQ(repro.exit_code, 1) << repro.out << repro.err;
}

// A cmd: engine: repro.sh runs the user's template on the bundle's files, compare.py reads the
// output_K.pb it wrote and compares with expected/.
TEST(Reproduction, ACommandEnginesReproShRunsTheTemplateOnTheBundleAndComparesItsOutputs) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", testing::kBroadcastChain);
  const std::string engine = "cmd:" + std::string(REDUCE_BINARY_DIR) +
                             "/reduce run {model} --engine opt:fault=broadcast-batch1 --inputs {inputs} --save-outputs {outputs} --save-format pb";
  auto r = run_reduce({(dir / "m.onnxtxt").string(), "--engine", engine, "-o", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_TRUE(fs::exists(dir / "out" / "compare.py"));
  auto repro = run_process({"env", "PATH=/usr/bin:/bin", "sh", (dir / "out" / "repro.sh").string()});
  EXPECT_EQ(repro.exit_code, 1) << repro.out << repro.err;
  EXPECT_NE(repro.out.find("values beyond atol"), std::string::npos) << repro.out << repro.err;
  // The same script passes when the engine's fault is gone: it compares, it does not just fail.
  std::string script = read_bytes(dir / "out" / "repro.sh");
  const std::string fault = "opt:fault=broadcast-batch1";
  for (size_t at; (at = script.find(fault)) != std::string::npos;) script.replace(at, fault.size(), "opt");
  write_bytes(dir / "out" / "repro_fixed.sh", script);
  auto fixed = run_process({"env", "PATH=/usr/bin:/bin", "sh", (dir / "out" / "repro_fixed.sh").string()});
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out << fixed.err;
}

TEST(Reproduction, ACheckScriptsReproShRunsTheScriptOnTheBundlesModel) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", testing::kBroadcastChain);
  write_bytes(dir / "fails_on_mul.sh", "grep -q Mul \"$1\" && exit 1\nexit 0\n");
  auto r = run_reduce({(dir / "m.onnxtxt").string(), "--engine", "check:sh " + (dir / "fails_on_mul.sh").string() + " {model}",
                       "-o", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto repro = run_process({"sh", (dir / "out" / "repro.sh").string()});
  EXPECT_EQ(repro.exit_code, 1) << repro.out << repro.err;
  EXPECT_NE(repro.out.find("FAILS"), std::string::npos) << repro.out;
}

// Conv+BN folding needs BN's statistics as weights; here the variance reaches BN through an
// Identity. Cutting the Identity leaves the variance a weight (its recorded value), as in the
// original, so the reproducer is the Conv and the BN, not the Identity with them.
const char* kBnThroughIdentity = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,2,4,4] X) => (float[1,2,4,4] Y)
<float[2,2,1,1] W = {1.0, 0.5, 0.25, 1.0}, float[2] S = {1.0, 1.0}, float[2] B = {0.0, 0.0}, float[2] M = {0.0, 0.0},
 float[2] V = {0.0001, 0.0002}>
{
  a = Relu(X)
  v = Identity(V)
  c = Conv(a, W)
  n = BatchNormalization <epsilon = 0.01> (c, S, B, M, v)
  Y = Tanh(n)
}
)";

TEST(Reproduction, AWeightReadThroughAnIdentityStaysAWeightWhenTheIdentityIsCut) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", kBnThroughIdentity);
  auto r = run_reduce({(dir / "m.onnxtxt").string(), "--engine", "opt:fault=conv-bn-fold-eps", "-o", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = report_of(dir / "out");
  EXPECT_EQ(report["reduced"]["op_types"], nlohmann::json({{"BatchNormalization", 1}, {"Conv", 1}})) << report.dump();
  EXPECT_EQ(report["reduced"]["inputs"], 1);
  EXPECT_TRUE(report["one_minimal"].get<bool>());
}

// onnxruntime's Python package is not on this machine: a stand-in module runs onnxruntime-node
// underneath (docs/examples/ort_adapter.mjs), raising its refusals as onnxruntime for Python does
// ("[ONNXRuntimeError] : N : CODE : message"), and logs the session options repro.py passes.
// STAND_IN_MODE=fixed gives the expected values (a release that fixed the bug), wrong gives zeros.
const char* kStandInOrt = R"PY(
import json, os, subprocess, tempfile
import numpy as np

__version__ = "1.30.0"

class GraphOptimizationLevel:
    ORT_DISABLE_ALL, ORT_ENABLE_BASIC, ORT_ENABLE_EXTENDED, ORT_ENABLE_ALL = "disable", "basic", "extended", "all"

class ExecutionMode:
    ORT_SEQUENTIAL = "sequential"

class SessionOptions:
    pass

class InferenceSession:
    def __init__(self, model, options, providers):
        self.model = model
        with open(os.environ["STAND_IN_LOG"], "w") as log:
            json.dump({"model": os.path.basename(model), "level": options.graph_optimization_level,
                       "threads": options.intra_op_num_threads, "providers": providers}, log)

    def run(self, names, feeds):
        mode = os.environ.get("STAND_IN_MODE", "")
        if mode in ("fixed", "wrong"):
            import __main__  # repro.py's engine process: its reader of the bundle's expected/
            expected = __main__.load_folder("expected")
            values = [expected[n] for n in names]
            return values if mode == "fixed" else [np.zeros_like(v) for v in values]
        with tempfile.TemporaryDirectory() as d:
            np.savez(os.path.join(d, "in.npz"), **feeds)
            p = subprocess.run(["node", os.environ["STAND_IN_ADAPTER"], self.model, os.path.join(d, "in.npz"),
                                os.path.join(d, "out.npz")], capture_output=True, text=True)
            if p.returncode != 0:
                lines = [l for l in p.stderr.splitlines() if l.startswith("Error: ")]
                raise RuntimeError("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : " + (lines[0][7:] if lines else p.stderr))
            with np.load(os.path.join(d, "out.npz")) as out:
                return [out[n] for n in names]
)PY";

TEST(Reproduction, OrtReproPyPassesTheSessionOptionsAndGivesTheMaintainersVerdict) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", kDoubleErf);
  auto r = run_reduce({(dir / "m.onnxtxt").string(), "--engine", "ort:opt=basic,threads=2", "-o", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path out = dir / "out";
  ASSERT_TRUE(fs::exists(out / "repro.py"));
  fs::create_directories(dir / "site" / "onnxruntime");
  write_bytes(dir / "site" / "onnxruntime" / "__init__.py", kStandInOrt);
  const std::string log = (dir / "log.json").string();
  auto run_with = [&](const std::string& mode, const std::string& site) {
    return run_process({"env", "PYTHONPATH=" + site, "STAND_IN_MODE=" + mode, "STAND_IN_LOG=" + log,
                        "STAND_IN_ADAPTER=" + std::string(REDUCE_SOURCE_DIR) + "/docs/examples/ort_adapter.mjs",
                        "NODE_PATH=" + (fs::path(REDUCE_ORT_DIR) / "node_modules").string(), kPython,
                        (out / "repro.py").string()});
  };
  const std::string site = (dir / "site").string();
  auto fails = run_with("", site);
  EXPECT_EQ(fails.exit_code, 1) << fails.out << fails.err;
  EXPECT_NE(fails.out.find("FAILS as reduce recorded (error)"), std::string::npos) << fails.out;
  EXPECT_NE(fails.out.find("Could not find an implementation for Erf(13)"), std::string::npos) << fails.out;
  const auto options = nlohmann::json::parse(read_bytes(log));
  EXPECT_EQ(options["model"], "model.onnx");
  EXPECT_EQ(options["level"], "basic");
  EXPECT_EQ(options["threads"], 2);
  EXPECT_EQ(options["providers"], nlohmann::json::array({"CPUExecutionProvider"}));
  auto fixed = run_with("fixed", site);
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out << fixed.err;
  auto wrong = run_with("wrong", site);
  EXPECT_EQ(wrong.exit_code, 3) << wrong.out << wrong.err;
  EXPECT_NE(wrong.out.find("FAILS ANOTHER WAY (mismatch)"), std::string::npos) << wrong.out;
  auto missing = run_with("", (dir / "nowhere").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.out << missing.err;
  EXPECT_NE(missing.out.find("CANNOT RUN: the Python module onnxruntime cannot be loaded"), std::string::npos) << missing.out;
}

testing::ProcessRun run_node(const fs::path& script) {
  return run_process({"env", "NODE_PATH=" + (fs::path(REDUCE_ORT_DIR) / "node_modules").string(), "node", script.string()});
}

TEST(Reproduction, OrtReproMjsShowsOnnxruntimeNodesRefusal) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", kDoubleErf);
  auto r = run_reduce({(dir / "m.onnxtxt").string(), "--engine", "ort", "-o", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto repro = run_node(dir / "out" / "repro.mjs");
  EXPECT_EQ(repro.exit_code, 1) << repro.out << repro.err;
  EXPECT_NE(repro.out.find("FAILS as reduce recorded (error)"), std::string::npos) << repro.out;
  EXPECT_NE(repro.out.find("Could not find an implementation for Erf(13)"), std::string::npos) << repro.out;
}

// Values: onnxruntime-node against expected values it does not give (a reference with a fault), read
// from expected/ by repro.mjs; the same script with loose tolerances passes.
TEST(Reproduction, OrtReproMjsComparesOnnxruntimeNodesOutputsWithExpectedNpz) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", testing::kBroadcastChain);
  auto r = run_reduce({(dir / "m.onnxtxt").string(), "--engine", "ort", "--reference", "opt:fault=broadcast-batch1", "-o",
                       (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto repro = run_node(dir / "out" / "repro.mjs");
  EXPECT_EQ(repro.exit_code, 1) << repro.out << repro.err;
  EXPECT_NE(repro.out.find("values beyond atol"), std::string::npos) << repro.out;
  std::string loose = read_bytes(dir / "out" / "repro.mjs");
  for (size_t at = 0; (at = loose.find("\"atol\":", at)) != std::string::npos; at += 20) loose.replace(at, 7, "\"atol\":1e9,\"was\":");
  write_bytes(dir / "out" / "loose.mjs", loose);
  auto passes = run_node(dir / "out" / "loose.mjs");
  EXPECT_EQ(passes.exit_code, 0) << passes.out << passes.err;
}

// docs/examples/ort_adapter.mjs as a cmd: engine (NumPy files, the model's weights inline): a
// model it runs passes, the Erf it refuses is the failure, and the bundle's repro.sh runs it again.
TEST(Reproduction, TheDocumentedNodeAdapterIsACmdEngineInNpzFiles) {
  TempDir dir;
  const std::string node_path = "NODE_PATH=" + (fs::path(REDUCE_ORT_DIR) / "node_modules").string();
  const std::string engine = "cmd:node " + std::string(REDUCE_SOURCE_DIR) +
                             "/docs/examples/ort_adapter.mjs {model_inline} {inputs_npz} {outputs_npz}";
  const std::string reduce = std::string(REDUCE_BINARY_DIR) + "/reduce";
  write_bytes(dir / "chain.onnxtxt", testing::kBroadcastChain);
  auto passes = run_process({"env", node_path, reduce, "check", (dir / "chain.onnxtxt").string(), "--engine", engine});
  EXPECT_EQ(passes.exit_code, 0) << passes.out << passes.err;
  write_bytes(dir / "erf.onnxtxt", kDoubleErf);
  auto r = run_process({"env", node_path, reduce, (dir / "erf.onnxtxt").string(), "--engine", engine, "-o", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(report_of(dir / "out")["reduced"]["op_types"], nlohmann::json({{"Erf", 1}}));
  auto repro = run_process({"env", node_path, "sh", (dir / "out" / "repro.sh").string()});
  EXPECT_EQ(repro.exit_code, 1) << repro.out << repro.err;
  EXPECT_NE(repro.out.find("Could not find an implementation for Erf"), std::string::npos) << repro.out;
}

TEST(Reproduction, TrtBundlesGetPolygraphysFilesAndAReproSh) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", testing::kBroadcastChain);
  // trtexec is not installed here: the bundle of a `cmd:` stand-in for TensorRT is checked in
  // trt_cli_test; this checks what the script says for a trt spec without running it.
  auto r = run_reduce({(dir / "m.onnxtxt").string(), "--engine", "opt:fault=broadcast-batch1", "--save-format", "polygraphy",
                       "-o", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(dir / "out" / "inputs.json"));
  // Each tensor once more (issue 66): the scripts read inputs/ and expected/, no .npz copies.
  EXPECT_TRUE(fs::exists(dir / "out" / "inputs" / "input_0.pb"));
  EXPECT_TRUE(fs::exists(dir / "out" / "expected" / "output_0.pb"));
  EXPECT_FALSE(fs::exists(dir / "out" / "inputs.npz"));
  EXPECT_FALSE(fs::exists(dir / "out" / "expected.npz"));
}

}  // namespace
}  // namespace reduce
