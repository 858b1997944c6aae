// Explicitly quantized models written by ONNX Runtime's quantizer (../shared/fixtures/quantized/):
// the int4-weight model loads, and the reference reproduces ONNX Runtime's quantized outputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/model_io.h"
#include "process_support.h"

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

}  // namespace
}  // namespace reduce
