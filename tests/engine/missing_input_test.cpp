// A node without an input its operator requires (`Relu("")`, `Add` with one input) is refused
// before anything runs: on load and validation (naming the file and the node), by the optimized
// engine's prepare, and by the reference executor before the kernel runs. Never a null dereference.
#include <gtest/gtest.h>

#include "core/model_io.h"
#include "core/validate.h"
#include "engine/engine.h"
#include "engine/optimized.h"
#include "process_support.h"
#include "test_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// One node of a table entry, and the input to take away.
struct MissingInputCase {
  const char* node;  // the node's text; its output is Z
  size_t input;      // the required input removed
};

// Ops that dereferenced a missing required input on `ref` and `opt` (issue 16, finding 1).
const MissingInputCase kCases[] = {
    {"Z = Relu(X)", 0},
    {"Z = Add(X, Y)", 1},
    {"Z = MatMul(X, Y)", 0},
    {"Z = Gemm(X, Y)", 1},
    {"Z = Conv(X, Y)", 1},
    {"Z = Gather(X, I)", 1},
    {"Z = Expand(X, S)", 1},
    {"Z = Softmax(X)", 0},
    {"Z = Transpose(X)", 0},
    {"Z = Tile(X, S)", 1},
    {"Z = ConstantOfShape(S)", 0},
    {"Z = Range(X, Y, X)", 2},
    {"Z = Cast <to = 1> (X)", 0},
    {"Z = Identity(X)", 0},
    {"Z = Split(X)", 0},
    {"Z = Mod(X, Y)", 1},
    {"Z = Pow(X, Y)", 1},
    {"Z = PRelu(X, Y)", 1},
    {"Z = Clip(X)", 0},
    {"Z = Squeeze(X)", 0},
    {"Z = QuantizeLinear(X, Y)", 1},
    {"Z = GatherND(X, I)", 1},
    {"Z = ScatterND(X, I, Y)", 2},
    {"Z = OneHot(I, S, Y)", 2},
    {"Z = NonMaxSuppression(X, Y)", 1},
    {"Z = RoiAlign(X, Y, I)", 2},
    {"Z = GridSample(X, Y)", 1},
    {"Z = InstanceNormalization(X, Y, Y)", 2},
    {"Z = MaxUnpool <kernel_shape = [2, 2]> (X, I)", 1},
    {"Z = CumSum(X, I)", 1},
    {"Z = Trilu(X)", 0},
    {"Z = ReverseSequence(X, I)", 1},
    {"Z = DFT(X)", 0},
    {"Z = If(C) <then_branch = t () => (float[2, 3] r) { r = Identity(X) },"
     " else_branch = e () => (float[2, 3] r) { r = Identity(Y) }>", 0},
};

Model model_of(const MissingInputCase& c) {
  const std::string text = std::string(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] X, float[2, 3] Y, int64[1] I, int64[2] S, bool C) => (float[2, 3] Z)
{
  )") + c.node + "\n}\n";
  Model m = testing::parse_model(text);
  if (!m.graph.nodes.empty()) m.graph.nodes[0].name = "n0";
  return m;
}

// The ways of leaving input k out: named "" or (when it is the last one) not given at all.
std::vector<Model> models_without_input(const MissingInputCase& c) {
  std::vector<Model> out;
  Model empty = model_of(c);
  if (empty.graph.nodes.empty()) return out;
  empty.graph.nodes[0].inputs[c.input] = "";
  out.push_back(empty);
  Model fewer = model_of(c);
  if (fewer.graph.nodes[0].inputs.size() == c.input + 1) {
    fewer.graph.nodes[0].inputs.pop_back();
    out.push_back(fewer);
  }
  return out;
}

TensorMap zero_inputs() {
  TensorMap in;
  in["X"] = Tensor::allocate(DType::Float, {2, 3}).value();
  in["Y"] = Tensor::allocate(DType::Float, {2, 3}).value();
  in["I"] = Tensor::allocate(DType::Int64, {1}).value();
  in["S"] = Tensor::allocate(DType::Int64, {2}).value();
  in["C"] = Tensor::allocate(DType::Bool, {}).value();
  return in;
}

std::string expected_error(const MissingInputCase& c) {
  const std::string op = model_of(c).graph.nodes[0].op_type;
  return "node 'n0' (" + op + "): input " + std::to_string(c.input) + " is required";
}

// The error of preparing and running `model`, or "" when it ran.
std::string run_error(Engine& engine, const Model& model) {
  auto prepared = engine.prepare(model);
  if (!prepared) return prepared.error().what;
  auto out = (*prepared)->run(zero_inputs());
  return out ? "" : out.error().what;
}

TEST(MissingInput, UnchangedModelsOfTheTableAreValid) {
  for (const auto& c : kCases) EXPECT_TRUE(validate_model(model_of(c)).ok()) << c.node;
}

TEST(MissingInput, ValidationNamesTheNodeAndTheInput) {
  for (const auto& c : kCases) {
    for (const Model& m : models_without_input(c)) {
      Status s = validate_model(m);
      ASSERT_FALSE(s.ok()) << c.node;
      EXPECT_EQ(s.error().what, expected_error(c));
    }
  }
}

TEST(MissingInput, LoadingRefusesTheModelNamingTheFile) {
  TempDir dir;
  for (const auto& c : kCases) {
    for (const Model& m : models_without_input(c)) {
      const fs::path path = dir / "m.onnx";
      ASSERT_TRUE(save_model(m, path).ok());
      auto loaded = load_model(path);
      ASSERT_FALSE(loaded.ok()) << c.node;
      EXPECT_EQ(loaded.error().message(), path.string() + ": " + expected_error(c));
    }
  }
}

TEST(MissingInput, ReferenceEngineFailsBeforeTheKernelRuns) {
  auto engine = make_reference_engine(1);
  for (const auto& c : kCases)
    for (const Model& m : models_without_input(c)) {
      const std::string error = run_error(*engine, m);
      EXPECT_NE(error.find(expected_error(c)), std::string::npos) << c.node << ": " << error;
    }
}

TEST(MissingInput, OptimizedEngineRefusesTheModel) {
  auto engine = make_optimized_engine({});
  for (const auto& c : kCases)
    for (const Model& m : models_without_input(c)) {
      const std::string error = run_error(*engine, m);
      EXPECT_NE(error.find(expected_error(c)), std::string::npos) << c.node << ": " << error;
    }
}

TEST(MissingInput, CheckExitsTwoWithOneLine) {
  TempDir dir;
  Model m = model_of(kCases[0]);
  m.graph.nodes[0].name = "relu_0";
  m.graph.nodes[0].inputs[0] = "";
  const fs::path path = dir / "m.onnx";
  ASSERT_TRUE(save_model(m, path).ok());
  for (const char* engine : {"ref", "opt"}) {
    auto r = testing::run_reduce({"check", path.string(), "--engine", engine});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, "error: " + path.string() + ": node 'relu_0' (Relu): input 0 is required\n");
  }
}

}  // namespace
}  // namespace reduce
