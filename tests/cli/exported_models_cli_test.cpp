// Models exported by today's PyTorch (IR 8-10, opsets 17-23; ../shared/fixtures/exported/) on every
// engine: a verdict everywhere (never INVALID), ONNX Runtime's outputs matched with the default
// tolerances (FP16 export included), reductions whose reproducer keeps the user's IR version and
// opsets and loads in ONNX Runtime, and OpenCV 4.6's refusals reduced to the node it refuses.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/model_io.h"
#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::run_process;
using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

const fs::path kExported = fs::path(REDUCE_SHARED_FIXTURES) / "exported";

std::string model_of(const std::string& name) { return (kExported / name / "model.onnx").string(); }
std::string data_of(const std::string& name) { return (kExported / name / "test_data_set_0").string(); }

const std::vector<std::string> kFixtures = {"bert_dynamo",           "bert_fp16_dynamo",   "bert_torchscript_op17",
                                            "unet_attn_dynamo_op23", "vit_dynamo_external", "mobilenetv3_dynamo"};

std::string script(const TempDir& dir, const std::string& name, const std::string& body) {
  write_bytes(dir / name, "#!/bin/sh\n" + body);
  return (dir / name).string();
}

// The "ir_version: N" and "opsets: ..." lines of `reduce info`.
std::string version_lines(const std::string& model) {
  auto info = run_reduce({"info", model});
  std::string out;
  std::istringstream lines(info.out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("ir_version", 0) == 0 || line.rfind("opset", 0) == 0) out += line + "\n";
  return out;
}

size_t occurrences(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

class ExportedModel : public ::testing::TestWithParam<std::string> {};

// Every engine gives a verdict: exit 0 (pass) or 1 (fails), never 2 and never INVALID.
TEST_P(ExportedModel, EveryEngineGivesAVerdict) {
  const std::string name = GetParam();
  TempDir dir;
  const std::string reduce_bin = std::string(REDUCE_BINARY_DIR) + "/reduce";
  const std::string passes = script(dir, "passes.sh", "test -s \"$1\" || exit 3\nexit 0\n");
  const std::vector<std::string> engines = {
      "ref", "opt", "opencv", "isolated:opt", "ort",
      "cmd:" + reduce_bin + " run {model} --inputs {inputs} --save-outputs {outputs}",
      "check:sh " + passes + " {model}"};
  for (const std::string& engine : engines) {
    auto r = run_reduce({"check", model_of(name), "--engine", engine, "--inputs", data_of(name)});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << engine << "\n" << r.out << r.err;
    EXPECT_EQ(r.out.find("INVALID"), std::string::npos) << engine << "\n" << r.out;
    EXPECT_NE(r.out.find("verdict: "), std::string::npos) << engine << "\n" << r.out << r.err;
    // Engines that run the model as ONNX Runtime does agree with the reference.
    if (engine == "ref" || engine == "ort" || engine.rfind("cmd:", 0) == 0 || engine.rfind("check:", 0) == 0) {
      EXPECT_EQ(r.exit_code, 0) << engine << "\n" << r.out << r.err;
    }
  }
}

// ONNX Runtime's saved outputs are the expected values: the reference matches them with the
// default tolerances, which follow the outputs' element type (the FP16 export's too).
TEST_P(ExportedModel, TheReferenceMatchesOnnxRuntimesOutputsWithTheDefaultTolerances) {
  const std::string name = GetParam();
  auto r = run_reduce({"check", model_of(name), "--engine", "ref", "--inputs", data_of(name), "--expected", data_of(name)});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
}

// ONNX Runtime's optimizer against itself runs on every export.
TEST_P(ExportedModel, OnnxRuntimeAgainstItsUnoptimizedSelfRuns) {
  const std::string name = GetParam();
  auto r = run_reduce({"check", model_of(name), "--engine", "ort", "--reference", "ort:opt=disable", "--inputs", data_of(name)});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: "), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.out.find("INVALID"), std::string::npos) << r.out;
}

// A check: script that fails while one chosen node is in the model: the reduction ends at that node
// alone, 1-minimal, and the reproducer is the kind of model the user gave (IR version, opsets)
// and loads in ONNX Runtime.
TEST_P(ExportedModel, ReducesToTheChosenNodeKeepingIrVersionAndOpsets) {
  const std::string name = GetParam();
  auto model = load_model(model_of(name));
  ASSERT_TRUE(model.ok()) << model.error().message();
  // A node from the second half whose name occurs once in the file: grep sees exactly that node.
  const std::string bytes = read_bytes(model_of(name));
  const auto& nodes = model->graph.nodes;
  std::string chosen;
  for (size_t k = nodes.size() / 2; k < nodes.size() && chosen.empty(); ++k)
    if (nodes[k].name.size() > 4 && nodes[k].op_type != "Constant" && occurrences(bytes, nodes[k].name) == 1)
      chosen = nodes[k].name;
  ASSERT_FALSE(chosen.empty());
  TempDir dir;
  const std::string has_node =
      script(dir, "has_node.sh", "if grep -aqF '" + chosen + "' \"$1\"; then echo 'rejected: " + chosen + "'; exit 1; fi\nexit 0\n");
  const fs::path out = dir / "out";
  auto r = run_reduce({model_of(name), "--engine", "check:sh " + has_node + " {model}", "--inputs", data_of(name), "-j", "2",
                       "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
  EXPECT_EQ(report["reduced"]["nodes"], 1) << report.dump(2);
  EXPECT_TRUE(report["one_minimal"].get<bool>()) << report.dump(2);
  auto reduced = load_model(out / "model.onnx");
  ASSERT_TRUE(reduced.ok()) << reduced.error().message();
  ASSERT_EQ(reduced->graph.nodes.size(), 1u);
  EXPECT_EQ(reduced->graph.nodes[0].name, chosen);
  EXPECT_EQ(reduced->ir_version, model->ir_version);
  // Its outputs are declared with the shapes they had, even where ONNX 1.12's inference gives up:
  // static where the original is static, a dim_param where the original's dim is symbolic (issue 66:
  // as dynamic as the user's model had it), never a dim left unknown.
  bool symbolic_inputs = false;
  for (const ValueInfo& vi : model->graph.inputs)
    for (const Dim& d : vi.type.dims) symbolic_inputs |= !d.is_static();
  for (const ValueInfo& vi : reduced->graph.outputs) {
    EXPECT_TRUE(vi.type.has_shape) << vi.name;
    for (const Dim& d : vi.type.dims) {
      EXPECT_TRUE(d.is_static() || !d.param.empty()) << vi.name;
      if (!symbolic_inputs) EXPECT_TRUE(d.is_static()) << vi.name;
    }
  }
  EXPECT_EQ(version_lines((out / "model.onnx").string()), version_lines(model_of(name)));
  auto ort = run_reduce({"check", (out / "model.onnx").string(), "--engine", "ort", "--inputs", (out / "inputs").string()});
  EXPECT_EQ(ort.exit_code, 0) << ort.out << ort.err;
}

INSTANTIATE_TEST_SUITE_P(Exported, ExportedModel, ::testing::ValuesIn(kFixtures),
                         [](const auto& info) { return info.param; });

// A real OpenCV 4.6 bug: an Identity whose input is a weight fails to load. The reduction ends at
// that one Identity.
TEST(ExportedOpenCv, TorchScriptBertReducesToTheIdentityOnAWeight) {
  TempDir dir;
  const fs::path out = dir / "out";
  auto r = run_reduce({model_of("bert_torchscript_op17"), "--engine", "opencv", "--inputs", data_of("bert_torchscript_op17"),
                       "-j", "2", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto reduced = load_model(out / "model.onnx");
  ASSERT_TRUE(reduced.ok()) << reduced.error().message();
  ASSERT_EQ(reduced->graph.nodes.size(), 1u);
  EXPECT_EQ(reduced->graph.nodes[0].op_type, "Identity");
  EXPECT_EQ(reduced->ir_version, 8);
  const std::string error = read_bytes(out / "actual" / "error.txt");
  EXPECT_NE(error.find("Identity"), std::string::npos) << error;
  // Without reduce: repro.py with cv2.dnn (Debian's python3-opencv, the same OpenCV 4.6) fails alike.
  auto repro = run_process({"/usr/bin/python3", (out / "repro.py").string()});
  EXPECT_EQ(repro.exit_code, 1) << repro.out << repro.err;
  EXPECT_NE(repro.out.find("FAILS as reduce recorded (error)"), std::string::npos) << repro.out;
  EXPECT_NE(repro.out.find("Identity"), std::string::npos) << repro.out;
}

// The engine reads the user's file as given: Constant nodes where the file has them, so OpenCV meets
// the nodes in the user's order and `reduce check` names the node that OpenCV names when it reads the
// user's file itself (issue 65).
TEST(ExportedOpenCv, CheckNamesTheNodeOpenCvNamesOnTheUsersFile) {
  TempDir dir;
  write_bytes(dir / "read.py", "import cv2, sys\ntry:\n    cv2.dnn.readNetFromONNX(sys.argv[1])\nexcept cv2.error as e:\n"
                               "    print(str(e).split('onnx_node!')[1].split(')')[0])\n");
  auto direct = run_process({"/usr/bin/python3", (dir / "read.py").string(), model_of("bert_torchscript_op17")});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  const std::string node = direct.out.substr(0, direct.out.find('\n'));
  ASSERT_FALSE(node.empty());
  auto check = run_reduce({"check", model_of("bert_torchscript_op17"), "--engine", "opencv", "--inputs",
                           data_of("bert_torchscript_op17")});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE(check.out.find("onnx_node!" + node + ")"), std::string::npos) << node << "\n" << check.out;
}

// The original's check hands the engine the user's file byte for byte (issue 65): a `check:` script
// and a `cmd:` engine that compare the file they get with the user's pass (they failed on the
// re-serialization reduce handed them before), as every export here does; a check with an input
// shape fixed (the model is no longer the file) gets reduce's own writing, and a command that fails
// when it is not the user's file fails then.
TEST(ExportedModels, TheOriginalsCheckGetsTheUsersFileAsGiven) {
  for (const std::string& name : kFixtures) {
    if (name == "vit_dynamo_external") continue;  // its weights are resolved against its folder: written anew
    const std::string same = "check:cmp -s {model} " + model_of(name);
    auto r = run_reduce({"check", model_of(name), "--engine", same, "--inputs", data_of(name)});
    EXPECT_EQ(r.exit_code, 0) << name << "\n" << r.out << r.err;
  }
  TempDir dir;
  const std::string reduce_bin = std::string(REDUCE_BINARY_DIR) + "/reduce";
  const std::string cmd = script(dir, "eng.sh", "cmp -s \"$1\" \"$2\" || { echo not the users file >&2; exit 4; }\nexec " +
                                                   reduce_bin + " run \"$1\" --inputs \"$3\" --save-outputs \"$4\"\n");
  const std::string name = "bert_torchscript_op17";
  auto r = run_reduce({"check", model_of(name), "--engine", "cmd:sh " + cmd + " {model} " + model_of(name) + " {inputs} {outputs}",
                       "--inputs", data_of(name)});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // Edited on load (a dim fixed): the engine gets the model reduce holds, not the file.
  auto fixed = run_reduce({"check", model_of(name), "--engine", "check:cmp -s {model} " + model_of(name), "--inputs",
                           data_of(name), "--input-shape", "input_ids:1x16"});
  EXPECT_EQ(fixed.exit_code, 1) << fixed.out << fixed.err;
}

// A model exported in FP16 (`model.half()`) through `fp16:`: its float16 values are left as they are
// and its float16 outputs come back float16, so it passes at the FP16 tolerances (issue 72).
TEST(ExportedFp16, Fp16OrtPassesOnTheFp16Export) {
  auto r = run_reduce({"check", model_of("bert_fp16_dynamo"), "--engine", "fp16:ort", "--inputs", data_of("bert_fp16_dynamo")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
}

// The FP32 BERT on `fp16:ort` at tolerances tighter than FP16's (it passes at the FP16 defaults):
// its reproducer fails the same way on the exact FP16 reference, so the bundle says FP16 rounding,
// not an ONNX Runtime bug (issue 65).
TEST(ExportedFp16, Fp16OrtOnTheFp32BertIsFp16Rounding) {
  TempDir dir;
  auto r = run_reduce({model_of("bert_dynamo"), "--engine", "fp16:ort", "--inputs", data_of("bert_dynamo"), "--atol", "1e-3",
                       "--rtol", "1e-3", "-j", "2", "-o", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 8) << r.out << r.err;
  EXPECT_NE(r.out.find("FP16 ROUNDING"), std::string::npos) << r.out;
  const std::string md = read_bytes(dir / "out" / "report.md");
  EXPECT_TRUE(md.starts_with("# FP16 rounding, not an engine bug")) << md.substr(0, 400);
}

// An ONNX Runtime contrib op (com.microsoft.Gelu) that the reference lacks: with the expected
// outputs from elsewhere (--expected, or a check: script that decides alone) it stops nothing; one
// line says what the reference refused and what is therefore unknown.
const char* kContribOp = R"(
<ir_version: 10, opset_import: ["" : 20, "com.microsoft" : 1]>
contrib (float[2, 4] x) => (float[2, 4] y) {
  a = Sigmoid(x)
  b = Tanh(a)
  g = com.microsoft.Gelu(b)
  c = Relu(g)
  y = Abs(c)
}
)";

TEST(ReferenceRefusal, AContribOpStopsNothingWhenTheExpectedValuesComeFromElsewhere) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", kContribOp);
  const std::string m = (dir / "m.onnxtxt").string();
  // Without expected values from elsewhere: one line saying how to give them.
  auto refused = run_reduce({"check", m, "--engine", "ort"});
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("unsupported operator com.microsoft.Gelu"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--reference ENGINE"), std::string::npos) << refused.err;
  auto golden = run_reduce({"run", m, "--engine", "ort", "--save-inputs", (dir / "in").string(), "--save-outputs",
                            (dir / "out").string()});
  ASSERT_EQ(golden.exit_code, 0) << golden.out << golden.err;
  auto r = run_reduce({"check", m, "--engine", "ort", "--inputs", (dir / "in").string(), "--expected", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: the reference (ref) cannot run 1 node(s), the first: node producing 'g' (Gelu): "
                       "unsupported operator com.microsoft.Gelu"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the 3 value(s) that depend on them are unknown"), std::string::npos) << r.out;
  // A check: script decides alone: the reduction runs, on the values the reference could record.
  const std::string has_tanh = script(dir, "has_tanh.sh", "if grep -aq Tanh \"$1\"; then exit 1; fi\nexit 0\n");
  auto reduced = run_reduce({m, "--engine", "check:sh " + has_tanh + " {model}", "-o", (dir / "bundle").string()});
  ASSERT_EQ(reduced.exit_code, 0) << reduced.out << reduced.err;
  EXPECT_NE(reduced.err.find("note: the reference (ref) cannot run 1 node(s)"), std::string::npos) << reduced.err;
  auto bundle = load_model(dir / "bundle" / "model.onnx");
  ASSERT_TRUE(bundle.ok()) << bundle.error().message();
  EXPECT_LT(bundle->graph.nodes.size(), 5u);
  EXPECT_TRUE(std::any_of(bundle->graph.nodes.begin(), bundle->graph.nodes.end(), [](const Node& n) { return n.op_type == "Tanh"; }));
  EXPECT_FALSE(std::any_of(bundle->graph.nodes.begin(), bundle->graph.nodes.end(), [](const Node& n) { return n.op_type == "Sigmoid"; }));
}

// OpenCV 4.6 on dynamo exports: it has no GroupNormalization (opset 18 and later), and it reads
// ReduceMean's axes (an input since opset 18) wrongly, so the Conv after it gets the wrong channel
// count. Each refusal reduces to what it needs, keeping the export's IR version and opset.
TEST(ExportedOpenCv, DynamoExportsReduceToTheOpsOpenCvRefuses) {
  struct Case {
    std::string fixture;
    std::multiset<std::string> ops;
  };
  for (const Case& c : {Case{"unet_attn_dynamo_op23", {"GroupNormalization"}},
                        Case{"mobilenetv3_dynamo", {"Conv", "ReduceMean"}}}) {
    TempDir dir;
    const fs::path out = dir / "out";
    auto r = run_reduce({model_of(c.fixture), "--engine", "opencv", "--inputs", data_of(c.fixture), "-j", "2", "-o", out.string()});
    ASSERT_EQ(r.exit_code, 0) << c.fixture << "\n" << r.out << r.err;
    auto reduced = load_model(out / "model.onnx");
    ASSERT_TRUE(reduced.ok()) << reduced.error().message();
    std::multiset<std::string> ops;
    for (const Node& n : reduced->graph.nodes) ops.insert(n.op_type);
    EXPECT_EQ(ops, c.ops) << c.fixture;
    EXPECT_EQ(version_lines((out / "model.onnx").string()), version_lines(model_of(c.fixture))) << c.fixture;
    const std::string error = read_bytes(out / "actual" / "error.txt");
    EXPECT_NE(error.find(*c.ops.begin()), std::string::npos) << c.fixture << "\n" << error;
  }
}

}  // namespace
}  // namespace reduce
