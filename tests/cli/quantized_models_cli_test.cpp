// Explicitly quantized models written by ONNX Runtime's quantizer (../shared/fixtures/quantized/):
// the int4-weight model loads, and the reference reproduces ONNX Runtime's quantized outputs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "core/model_io.h"
#include "process_support.h"
#include "test_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::run_reduce;

const fs::path kQuantized = fs::path(REDUCE_SHARED_FIXTURES) / "quantized";

std::string model_of(const std::string& name) { return (kQuantized / name / "model.onnx").string(); }
std::string data_of(const std::string& name) { return (kQuantized / name / "test_data_set_0").string(); }

// Its int4 weights and zero points (element type 22, packed two per byte) load.
TEST(QuantizedModels, TheInt4WeightModelLoadsWithItsInt4Tensors) {
  auto model = load_model(model_of("bert_int4w_qdq"));
  ASSERT_TRUE(model.ok()) << model.error().message();
  size_t int4 = 0;
  for (const auto& init : model->graph.initializers) int4 += init.tensor.dtype() == DType::Int4;
  EXPECT_GT(int4, 0u);
  auto info = run_reduce({"info", model_of("bert_int4w_qdq")});
  EXPECT_EQ(info.exit_code, 0) << info.out << info.err;
  EXPECT_NE(info.out.find("DequantizeLinear"), std::string::npos) << info.out;
}

// ONNX Runtime's outputs of the quantized models (stored next to them) are matched by the reference
// with the default tolerances.
class QuantizedModel : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantizedModel, TheReferenceMatchesOnnxRuntimesQuantizedOutputs) {
  const std::string name = GetParam();
  auto r = run_reduce({"check", model_of(name), "--engine", "ref", "--inputs", data_of(name), "--expected", data_of(name)});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Quantized, QuantizedModel, ::testing::Values("bert_int8_qdq", "bert_int4w_qdq"),
                         [](const auto& info) { return info.param; });

const std::string kFloatBert = (fs::path(REDUCE_SHARED_FIXTURES) / "exported" / "bert_dynamo" / "model.onnx").string();

nlohmann::json read_json(const fs::path& path) { return nlohmann::json::parse(testing::read_bytes(path)); }

// `reduce precision` on ONNX Runtime's INT8 model against its float model: which quantized nodes to
// leave in float so that the outputs are within 0.03 of the float model's.
std::vector<std::string> quantized_precision(const fs::path& out, const std::string& jobs) {
  auto r = run_reduce({"precision", model_of("bert_int8_qdq"), "--float-model", kFloatBert, "--inputs", data_of("bert_int8_qdq"),
                       "--atol", "0.03", "--rtol", "0", "-j", jobs, "-o", out.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("quantized nodes left in float (1-minimal)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nodes_to_exclude=['"), std::string::npos) << r.out;
  std::vector<std::string> set;
  std::istringstream list(testing::read_bytes(out / "precision.txt"));
  for (std::string line; std::getline(list, line);) set.push_back(line);
  return set;
}

TEST(QuantizedPrecision, FindsTheSameOneMinimalSetOfNodesToLeaveInFloatForEveryJ) {
  testing::TempDir dir;
  const auto one = quantized_precision(dir.path() / "j1", "1");
  const auto four = quantized_precision(dir.path() / "j4", "4");
  ASSERT_FALSE(one.empty());
  EXPECT_EQ(one, four);
  const auto report = read_json(dir.path() / "j1" / "report.json");
  EXPECT_EQ(report["mode"], "quantization");
  EXPECT_EQ(report["outcome"], "found");
  EXPECT_TRUE(report["one_minimal"].get<bool>());
  EXPECT_EQ(report["nodes_to_exclude"].size(), one.size());
  EXPECT_GT(report["weights"]["from_float_model"].get<int>(), 0);
  EXPECT_GT(report["max_abs_error"]["quantized"]["last_hidden_state"].get<double>(), 0.03);
  EXPECT_LE(report["max_abs_error"]["partially_quantized"]["last_hidden_state"].get<double>(), 0.03);
  EXPECT_EQ(report["confirm"]["set_passed_again"], 1);
  EXPECT_EQ(report["confirm"]["original_failed_again"], 1);
  EXPECT_LT(one.size(), report["candidates"].get<size_t>());

  // The partially quantized model it writes is within 0.03 of ONNX Runtime's float outputs, and
  // it still holds the other nodes' QuantizeLinear/DequantizeLinear pairs.
  const fs::path partial = dir.path() / "j1" / "model_partially_quantized.onnx";
  auto check = run_reduce({"check", partial.string(), "--engine", "ref", "--inputs", data_of("bert_int8_qdq"), "--expected",
                           (kQuantized / "bert_int8_qdq" / "float_outputs").string(), "--atol", "0.03", "--rtol", "0"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  auto info = run_reduce({"info", partial.string()});
  EXPECT_NE(info.out.find("QuantizeLinear"), std::string::npos) << info.out;
}

// Without the float model, the quantized model is compared with itself with every pair folded.
TEST(QuantizedPrecision, WithoutTheFloatModelEveryPairIsFoldedAndTheReportSaysSo) {
  testing::TempDir dir;
  auto r = run_reduce({"precision", model_of("bert_int8_qdq"), "--inputs", data_of("bert_int8_qdq"), "--atol", "0.03",
                       "--rtol", "0", "-o", dir.path().string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("against the model with every Q/DQ pair folded"), std::string::npos) << r.out;
  const auto report = read_json(dir.path() / "report.json");
  EXPECT_TRUE(report["float_model"].is_null());
  EXPECT_EQ(report["weights"]["from_float_model"], 0);
  EXPECT_GT(report["weights"]["folded"].get<int>(), 0);
  EXPECT_NE(testing::read_bytes(dir.path() / "report.md").find("folded weights keep the quantizer's rounding"), std::string::npos);
}

// The float model from another exporter (TorchScript; the quantized model was made from the dynamo
// export): no node name in common. Every weight used to be folded silently, and the answer was
// exit 4 "not a quantization problem"; the weights are now found by place and by value.
TEST(QuantizedPrecision, AFloatModelFromAnotherExporterGivesItsWeightsByPlaceAndValue) {
  testing::TempDir dir;
  const std::string torchscript = (fs::path(REDUCE_SHARED_FIXTURES) / "exported" / "bert_torchscript_op17" / "model.onnx").string();
  auto r = run_reduce({"precision", model_of("bert_int8_qdq"), "--float-model", torchscript, "--inputs", data_of("bert_int8_qdq"),
                       "--atol", "0.03", "--rtol", "0", "-j", "2", "-o", dir.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("quantized nodes left in float (1-minimal)"), std::string::npos) << r.out;
  const auto report = read_json(dir.path() / "report.json");
  EXPECT_EQ(report["float_model_nodes"]["matched_by_name"], 0);
  EXPECT_GT(report["float_model_nodes"]["matched_by_place"].get<int>() + report["float_model_nodes"]["matched_by_value"].get<int>(), 0);
  EXPECT_GT(report["weights"]["from_float_model"].get<int>(), report["weights"]["folded"].get<int>());
  EXPECT_NE(r.out.find("quantized nodes found in the float model: "), std::string::npos) << r.out;
}

TEST(QuantizedPrecision, WithinTheToleranceAlreadyIsExit3) {
  auto r = run_reduce({"precision", model_of("bert_int8_qdq"), "--float-model", kFloatBert, "--inputs", data_of("bert_int8_qdq"),
                       "--atol", "1", "--rtol", "0"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("within tolerance of the float model's"), std::string::npos) << r.out;
}

TEST(QuantizedPrecision, BadFloatModelsAreOneLineErrorsExit2) {
  testing::TempDir dir;
  const std::vector<std::string> common = {"--inputs", data_of("bert_int8_qdq"), "-o", (dir.path() / "out").string()};
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.end(), common.begin(), common.end());
    return run_reduce(args);
  };
  const std::string missing = (dir.path() / "missing.onnx").string();
  auto absent = run({"precision", model_of("bert_int8_qdq"), "--float-model", missing});
  EXPECT_EQ(absent.exit_code, 2);
  EXPECT_NE(absent.err.find(missing), std::string::npos) << absent.err;
  // A float model of another network: its outputs differ.
  const std::string other = (fs::path(REDUCE_SHARED_FIXTURES) / "exported" / "mobilenetv3_dynamo" / "model.onnx").string();
  auto unrelated = run({"precision", model_of("bert_int8_qdq"), "--float-model", other});
  EXPECT_EQ(unrelated.exit_code, 2);
  EXPECT_NE(unrelated.err.find(other + ": its inputs"), std::string::npos) << unrelated.err;
  // The float model itself as MODEL: nothing is quantized.
  auto unquantized = run({"precision", kFloatBert, "--float-model", kFloatBert});
  EXPECT_EQ(unquantized.exit_code, 2);
  EXPECT_NE(unquantized.err.find("nothing is quantized"), std::string::npos) << unquantized.err;
  // Two sources of expected values.
  auto both = run({"precision", model_of("bert_int8_qdq"), "--float-model", kFloatBert, "--expected",
                   (kQuantized / "bert_int8_qdq" / "float_outputs").string()});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--expected"), std::string::npos) << both.err;
  for (const auto* r : {&absent, &unrelated, &unquantized, &both})
    EXPECT_EQ(std::count(r->err.begin(), r->err.end(), '\n'), 1) << r->err;
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

}  // namespace
}  // namespace reduce
