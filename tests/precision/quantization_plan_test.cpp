// The Q/DQ plan against a float model: each quantized weight replaced by the float constant it was
// made from (within a quantization step), found by name, by place, or by value; none is an error.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "precision/quantization.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;

const char* kQuantized = R"(
<ir_version: 8, opset_import: ["" : 17]>
q (float[1, 2] X) => (float[1, 2] Y)
<int8[2, 2] wq = {2, -4, 6, 8}, float s = {0.5}, int8 z = {0}, int8[2, 2] vq = {1, 1, -1, 1}>
{
  w = DequantizeLinear(wq, s, z)
  v = DequantizeLinear(vq, s, z)
  a = MatMul(X, w)
  Y = MatMul(a, v)
}
)";

Model quantized_model() {
  Model m = parse_model(kQuantized);
  m.graph.nodes[2].name = "mm_0";
  m.graph.nodes[3].name = "mm_1";
  return m;
}

// The float network; its MatMuls named `first` and `second`, reading `w` then `v` (or, `swapped`,
// `v` then `w`: another exporter ordering same-shape layers its own way).
Model float_model(const std::string& first, const std::string& second, const std::string& weights, bool swapped = false) {
  Model m = parse_model(std::string(R"(
<ir_version: 8, opset_import: ["" : 17]>
f (float[1, 2] X) => (float[1, 2] Y)
<)") + weights + R"(>
{
)" + (swapped ? "  a = MatMul(X, v)\n  Y = MatMul(a, w)\n}\n" : "  a = MatMul(X, w)\n  Y = MatMul(a, v)\n}\n"));
  m.graph.nodes[0].name = first;
  m.graph.nodes[1].name = second;
  return m;
}

// Within one quantization step (0.5) of the dequantized {1, -2, 3, 4} and {0.5, 0.5, -0.5, 0.5}.
const char* kFloatWeights = "float[2, 2] w = {1.1, -2.1, 3.1, 4.1}, float[2, 2] v = {0.4, 0.6, -0.6, 0.4}";

TEST(QuantizationPlan, WeightsAreFoundByNameThenByPlaceAmongTheirOpType) {
  auto reference = make_reference_engine(1);
  auto by_name = plan_quantized_search(quantized_model(), float_model("mm_0", "mm_1", kFloatWeights), "f.onnx", *reference);
  ASSERT_TRUE(by_name.ok()) << by_name.error().message();
  EXPECT_EQ(by_name->nodes_matched_by_name, 2u);
  EXPECT_EQ(by_name->weights_from_float_model, 2u);
  EXPECT_EQ(by_name->weights_folded, 0u);
  // Another exporter's names: the K-th MatMul is the K-th MatMul.
  auto by_place = plan_quantized_search(quantized_model(), float_model("/encoder/MatMul", "/encoder/MatMul_1", kFloatWeights),
                                        "f.onnx", *reference);
  ASSERT_TRUE(by_place.ok()) << by_place.error().message();
  EXPECT_EQ(by_place->nodes_matched_by_name, 0u);
  EXPECT_EQ(by_place->nodes_matched_by_place, 2u);
  EXPECT_EQ(by_place->float_weights.at("w").data<float>()[0], 1.1f);
  EXPECT_EQ(by_place->float_weights.at("v").data<float>()[0], 0.4f);
}

// Same-shape layers in another order: the place points at the wrong weight, which its values
// refuse; the right one is found by its values.
TEST(QuantizationPlan, AWeightAtTheSamePlaceIsTakenOnlyWhenItsValuesAgree) {
  auto reference = make_reference_engine(1);
  auto plan = plan_quantized_search(quantized_model(), float_model("p", "q", kFloatWeights, true), "f.onnx", *reference);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  EXPECT_EQ(plan->nodes_matched_by_place, 0u);
  EXPECT_EQ(plan->nodes_matched_by_value, 2u);
  EXPECT_EQ(plan->float_weights.at("w").data<float>()[0], 1.1f);
  EXPECT_EQ(plan->float_weights.at("v").data<float>()[0], 0.4f);
}

// A weight several nodes read is one weight: replaced once, counted once.
TEST(QuantizationPlan, AWeightReadBySeveralNodesIsTakenOnce) {
  Model q = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
q (float[1, 2] X) => (float[1, 2] Y)
<int8[2, 2] wq = {2, -4, 6, 8}, float s = {0.5}, int8 z = {0}>
{
  w = DequantizeLinear(wq, s, z)
  a = MatMul(X, w)
  Y = MatMul(a, w)
}
)");
  auto reference = make_reference_engine(1);
  auto plan = plan_quantized_search(q, float_model("m0", "m1", kFloatWeights), "f.onnx", *reference);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  EXPECT_EQ(plan->weights_from_float_model, 1u);
  EXPECT_EQ(plan->weights_folded, 0u);
  EXPECT_EQ(plan->float_weights.at("w").data<float>()[0], 1.1f);
}

// A float model of another network: no weight is within a step of the quantized ones. Keeping them
// all dequantized would compare the quantized model with itself; it is an error naming the file.
TEST(QuantizationPlan, AFloatModelThatGivesNoWeightIsAnError) {
  auto reference = make_reference_engine(1);
  auto none = plan_quantized_search(quantized_model(),
                                    float_model("mm_0", "mm_1", "float[2, 2] w = {9, 9, 9, 9}, float[2, 2] v = {7, 7, 7, 7}"),
                                    "other.onnx", *reference);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message().find("other.onnx: no quantized weight has its float value here"), std::string::npos)
      << none.error().message();
}

}  // namespace
}  // namespace reduce
