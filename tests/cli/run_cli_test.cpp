// End-to-end: `reduce run` (inputs from files or seeded random values, saved outputs, errors) and
// `reduce conformance` (report format, exclusions, known failures, exit codes).
#include <gtest/gtest.h>

#include <cmath>

#include "core/model_io.h"
#include "core/tensor_file.h"
#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::run_reduce;
using testing::TempDir;

const char* kAddRelu = R"(
<ir_version: 8, opset_import: ["" : 15]>
add_relu (float[2, 3] a, float[2, 3] b) => (float[2, 3] y, float[2, 3] s)
{
  s = Add(a, b)
  y = Relu(s)
}
)";

Tensor floats(Shape shape, std::vector<float> v) { return Tensor::from_vector(DType::Float, std::move(shape), v).value(); }

fs::path save_text_model(const TempDir& dir, const std::string& name, const char* text) {
  auto model = parse_model_text(text);
  EXPECT_TRUE(model.ok()) << model.error().message();
  const fs::path path = dir / name;
  EXPECT_TRUE(save_model(*model, path).ok());
  return path;
}

TEST(RunCli, SavesNamedOutputsAsPbAndNpy) {
  TempDir dir;
  const fs::path model = save_text_model(dir, "m.onnx", kAddRelu);
  const fs::path inputs = dir / "in.npz";
  ASSERT_TRUE(write_npz(inputs, {{"a", floats({2, 3}, {1, -2, 3, -4, 5, -6})}, {"b", floats({2, 3}, {0, 0, 0, 1, 1, 1})}}, false).ok());
  auto r = run_reduce({"run", model.string(), "--engine", "ref", "--inputs", inputs.string(), "--save-outputs", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("y: float[2,3]"), std::string::npos) << r.out;
  auto y = read_tensor_pb(dir / "out" / "output_0.pb");
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(y->name, "y");
  EXPECT_TRUE(y->tensor.equals(floats({2, 3}, {1, 0, 3, 0, 6, 0})));
  auto s = read_npy(dir / "out" / "output_1.npy");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->equals(floats({2, 3}, {1, -2, 3, -3, 6, -5})));
}

TEST(RunCli, AnyValueCanBeRequestedAsOutput) {
  TempDir dir;
  const fs::path model = save_text_model(dir, "m.onnx", kAddRelu);
  auto r = run_reduce({"run", model.string(), "--outputs", "s", "--save-outputs", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto s = read_tensor_pb(dir / "out" / "output_0.pb");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->name, "s");
  EXPECT_FALSE(fs::exists(dir / "out" / "output_1.pb"));
}

TEST(RunCli, SaveFormatPicksTheFilesWritten) {
  TempDir dir;
  const fs::path model = save_text_model(dir, "m.onnx", kAddRelu);
  auto r = run_reduce({"run", model.string(), "--save-format", "pb", "--save-outputs", (dir / "pb").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "pb" / "output_1.pb"));
  EXPECT_FALSE(fs::exists(dir / "pb" / "output_0.npy"));
  r = run_reduce({"run", model.string(), "--save-format", "npy", "--save-outputs", (dir / "npy").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "npy" / "output_1.npy"));
  EXPECT_FALSE(fs::exists(dir / "npy" / "output_0.pb"));
  r = run_reduce({"run", model.string(), "--save-format", "text", "--save-outputs", (dir / "x").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--save-format must be pb, npy, both or polygraphy"), std::string::npos) << r.err;
}

// A reduced candidate whose inputs are all frozen has no runtime inputs; engine wrappers still pass
// an (empty) inputs folder.
TEST(RunCli, AModelWithoutRuntimeInputsRunsFromAnEmptyInputsFolder) {
  TempDir dir;
  const fs::path model = save_text_model(dir, "m.onnx", R"(
<ir_version: 8, opset_import: ["" : 15]>
constant_only () => (float[2] y)
<float[2] w = {1.0, -2.0}>
{
  y = Relu(w)
}
)");
  fs::create_directories(dir / "empty");
  auto r = run_reduce({"run", model.string(), "--inputs", (dir / "empty").string(), "--save-outputs", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "out" / "output_0.pb"));
  // A model that needs inputs still says which one is missing.
  const fs::path needs = save_text_model(dir, "needs.onnx", kAddRelu);
  r = run_reduce({"run", needs.string(), "--inputs", (dir / "empty").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("'a'"), std::string::npos) << r.err;
}

TEST(RunCli, RandomInputsDependOnlyOnTheSeed) {
  TempDir dir;
  const fs::path model = save_text_model(dir, "m.onnx", kAddRelu);
  for (const char* run : {"1", "2", "3"})
    ASSERT_EQ(run_reduce({"run", model.string(), "--seed", std::string(run) == "3" ? "8" : "7", "--save-inputs",
                          (dir / run).string()}).exit_code, 0);
  auto first = read_tensor_pb(dir / "1" / "input_0.pb"), second = read_tensor_pb(dir / "2" / "input_0.pb"),
       other = read_tensor_pb(dir / "3" / "input_0.pb");
  ASSERT_TRUE(first.ok() && second.ok() && other.ok());
  EXPECT_EQ(first->name, "a");
  EXPECT_TRUE(first->tensor.equals(second->tensor));
  EXPECT_FALSE(first->tensor.equals(other->tensor));
  for (uint64_t i = 0; i < first->tensor.elements(); ++i) {
    EXPECT_GE(first->tensor.element_as_double(i), -1.0);
    EXPECT_LT(first->tensor.element_as_double(i), 1.0);
  }
}

TEST(RunCli, InputRangeAndShapeOptionsApply) {
  TempDir dir;
  const fs::path model = save_text_model(dir, "m.onnx", R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[N, 2] a) => (float[N, 2] y) { y = Relu(a) }
)");
  auto r = run_reduce({"run", model.string(), "--input-shape", "a:3x2", "--input-range", "a:5,6", "--save-inputs",
                       (dir / "in").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto a = read_tensor_pb(dir / "in" / "input_0.pb");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->tensor.shape(), (Shape{3, 2}));
  for (uint64_t i = 0; i < a->tensor.elements(); ++i) EXPECT_GE(a->tensor.element_as_double(i), 5.0);
}

TEST(RunCli, BadInputsAreOneLineErrors) {
  TempDir dir;
  const fs::path model = save_text_model(dir, "m.onnx", kAddRelu);
  const fs::path wrong = dir / "wrong.npz";
  ASSERT_TRUE(write_npz(wrong, {{"a", floats({3, 2}, {1, 2, 3, 4, 5, 6})}, {"b", floats({2, 3}, {1, 2, 3, 4, 5, 6})}}, false).ok());
  auto shape = run_reduce({"run", model.string(), "--inputs", wrong.string()});
  EXPECT_EQ(shape.exit_code, 2);  // refused when bound, naming the file, before any engine runs
  EXPECT_NE(shape.err.find("wrong.npz: input 'a' is float[3,2] but the model declares float[2,3]"), std::string::npos)
      << shape.err;
  const fs::path partial = dir / "partial.npz";
  ASSERT_TRUE(write_npz(partial, {{"a", floats({2, 3}, {1, 2, 3, 4, 5, 6})}}, false).ok());
  auto missing = run_reduce({"run", model.string(), "--inputs", partial.string()});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("missing input 'b'"), std::string::npos) << missing.err;
  auto no_file = run_reduce({"run", model.string(), "--inputs", (dir / "nope.npz").string()});
  EXPECT_EQ(no_file.exit_code, 2);
  EXPECT_NE(no_file.err.find("nope.npz: no such file"), std::string::npos) << no_file.err;
  EXPECT_EQ(run_reduce({"run", model.string(), "--input-shape", "a:2xq"}).exit_code, 2);
  EXPECT_EQ(run_reduce({"run", model.string(), "--engine", "nonsense"}).exit_code, 2);
  EXPECT_EQ(run_reduce({"run", (dir / "absent.onnx").string()}).exit_code, 2);
}

TEST(RunCli, RunsTheOptimizedEngineFromItsSpec) {
  TempDir dir;
  const fs::path model = save_text_model(dir, "m.onnx", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 4] x) => (float[1, 4] y)
<float Two = {2.0}>
{ y = Pow(x, Two) }
)");
  const fs::path inputs = dir / "in.npz";
  ASSERT_TRUE(write_npz(inputs, {{"x", floats({1, 4}, {300, 1, 2, 3})}}, false).ok());
  auto r = run_reduce({"run", model.string(), "--engine", "opt:fp16", "--inputs", inputs.string(), "--save-outputs",
                       (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("engine opt:fp16"), std::string::npos) << r.out;
  auto y = read_npy(dir / "out" / "output_0.npy");
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(std::isinf(y->data<float>()[0]));  // 90000 overflows fp16
  auto bad = run_reduce({"run", model.string(), "--engine", "opt:fault=nope"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("unknown fault 'nope'"), std::string::npos) << bad.err;
}

TEST(RunCli, UnsupportedOperatorNamesNodeAndOp) {
  TempDir dir;
  const fs::path model = save_text_model(dir, "m.onnx", R"(
<ir_version: 8, opset_import: ["" : 15, "com.example" : 1]>
g (float[2] a) => (float[2] y) { y = com.example.Frobnicate(a) }
)");
  auto r = run_reduce({"run", model.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("unsupported operator com.example.Frobnicate"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(model.string()), std::string::npos) << r.err;
}

TEST(RunCli, AModelAskingForATerabyteTensorIsRefused) {
  TempDir dir;
  // 2^20 x 2^20 floats = 4 TiB, from a shape in the model itself.
  const fs::path model = save_text_model(dir, "bomb.onnx", R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[1] a) => (float[1048576, 1048576] y)
<int64[2] shape = {1048576, 1048576}>
{
  zeros = ConstantOfShape(shape)
  y = Add(zeros, a)
}
)");
  auto r = run_reduce({"run", model.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("exceeds the size limit"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// A conformance test folder: model.onnx plus test_data_set_0 with inputs and expected outputs.
void make_conformance_test(const fs::path& dir, const char* model_text, const std::vector<Tensor>& inputs,
                           const Tensor& expected) {
  fs::create_directories(dir / "test_data_set_0");
  auto model = parse_model_text(model_text);
  ASSERT_TRUE(model.ok());
  ASSERT_TRUE(save_model(*model, dir / "model.onnx").ok());
  for (size_t k = 0; k < inputs.size(); ++k)
    ASSERT_TRUE(write_tensor_pb(dir / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb"), "", inputs[k]).ok());
  ASSERT_TRUE(write_tensor_pb(dir / "test_data_set_0" / "output_0.pb", "", expected).ok());
}

const char* kRelu = R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[3] x) => (float[3] y) { y = Relu(x) }
)";

TEST(ConformanceCli, ReportsFailuresWithReasonAndCounts) {
  TempDir dir;
  make_conformance_test(dir / "suite" / "test_relu_good", kRelu, {floats({3}, {-1, 0, 2})}, floats({3}, {0, 0, 2}));
  make_conformance_test(dir / "suite" / "test_relu_bad", kRelu, {floats({3}, {-1, 0, 2})}, floats({3}, {0, 0, 3}));
  make_conformance_test(dir / "suite" / "test_relu_shape", kRelu, {floats({3}, {-1, 0, 2})}, floats({1, 3}, {0, 0, 2}));
  auto r = run_reduce({"conformance", (dir / "suite").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("FAIL " + (dir / "suite" / "test_relu_bad").string() + ": test_data_set_0: output 'y': 1 of 3 elements differ"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("expected float[1,3], got float[3]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1), "1 passed, 2 failed, 0 skipped\n");

  testing::write_bytes(dir / "known.txt", "# header\n\ntest_relu_bad  # a reason\n# the block's\n# reason\ntest_relu_shape\n");
  auto known = run_reduce({"conformance", (dir / "suite").string(), "--known-failures", (dir / "known.txt").string()});
  EXPECT_EQ(known.exit_code, 0) << known.out;
  EXPECT_NE(known.out.find("elements differ; first at [2]: expected 3, got 2; max |diff| 1 (known: a reason)\n"), std::string::npos) << known.out;
  EXPECT_NE(known.out.find("got float[3] (known: the block's reason)\n"), std::string::npos) << known.out;
}

TEST(ConformanceCli, AKnownFailureWithoutAReasonIsRefused) {
  TempDir dir;
  make_conformance_test(dir / "suite" / "test_relu_bad", kRelu, {floats({3}, {-1, 0, 2})}, floats({3}, {0, 0, 3}));
  // The header's block ends at the blank line: it is no entry's reason.
  testing::write_bytes(dir / "known.txt", "# header\n\ntest_relu_bad\n");
  auto r = run_reduce({"conformance", (dir / "suite").string(), "--known-failures", (dir / "known.txt").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + (dir / "known.txt").string() + ": line 3: 'test_relu_bad' has no reason (a # comment on its line or above it)\n");
  EXPECT_EQ(r.out, "");
}

TEST(ConformanceCli, ExcludedTestsAreSkippedWithTheirReason) {
  TempDir dir;
  make_conformance_test(dir / "test_bernoulli_like", R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[3] x) => (float[3] y) { y = Bernoulli(x) }
)", {floats({3}, {0, 1, 0})}, floats({3}, {0, 1, 0}));
  auto r = run_reduce({"conformance", "-v", dir.path().string()});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("SKIP " + (dir / "test_bernoulli_like").string() + ": Bernoulli: random generator"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 passed, 0 failed, 1 skipped"), std::string::npos);
  auto list = run_reduce({"conformance", "--list-skips"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_NE(list.out.find("op Bernoulli: random generator"), std::string::npos);
  EXPECT_NE(list.out.find("domain ai.onnx.ml: classical machine-learning operators"), std::string::npos);
}

TEST(ConformanceCli, TestsOfAnExcludedDomainAreSkippedNamingTheOp) {
  TempDir dir;
  make_conformance_test(dir / "test_binarizer", R"(
<ir_version: 8, opset_import: ["" : 15, "ai.onnx.ml" : 1]>
g (float[3] x) => (float[3] y) { y = ai.onnx.ml.Binarizer(x) }
)", {floats({3}, {-1, 0, 2})}, floats({3}, {0, 0, 1}));
  auto r = run_reduce({"conformance", "-v", dir.path().string()});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("SKIP " + (dir / "test_binarizer").string() + ": ai.onnx.ml.Binarizer: classical machine-learning"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 passed, 0 failed, 1 skipped"), std::string::npos);
}

TEST(ConformanceCli, MissingFolderIsAUsageError) {
  auto r = run_reduce({"conformance", "/no/such/folder"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/no/such/folder: no such folder"), std::string::npos);
}

}  // namespace
}  // namespace reduce
