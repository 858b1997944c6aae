// Q/DQ models (core/quantized_nodes.h): which nodes read dequantized values, and leaving some of
// them in float takes away exactly the pairs no other node reads.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/quantized_nodes.h"
#include "engine/engine.h"
#include "cli/fault_models.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;

// x is quantized once (uint8) and read by a MatMul and a Relu; the MatMul's weight is int8; the
// Add reads a DequantizeLinear of a graph input, which has no float value to go back to.
const char* const kQdq = R"(
<ir_version: 9, opset_import: ["" : 21]>
qdq (float[2,3] x, uint8[2,2] p) => (float[2,2] y, float[2,3] z, float[2,2] s)
<int8[3,2] w_q = {10, -20, 30, 40, -50, 60}, float w_scale = {0.01}, int8 w_zero = {0}, float x_scale = {0.02},
 uint8 x_zero = {128}>
{
  xq = QuantizeLinear(x, x_scale, x_zero)
  xd = DequantizeLinear(xq, x_scale, x_zero)
  wd = DequantizeLinear(w_q, w_scale, w_zero)
  y = MatMul(xd, wd)
  z = Relu(xd)
  pd = DequantizeLinear(p, x_scale, x_zero)
  s = Add(y, pd)
}
)";

Model qdq_model() {
  Model m = parse_model(kQdq);
  for (Node& n : m.graph.nodes) n.name = "n_" + n.outputs.at(0);
  return m;
}

size_t index_of(const Model& m, const std::string& name) {
  for (size_t i = 0; i < m.graph.nodes.size(); ++i)
    if (m.graph.nodes[i].name == name) return i;
  ADD_FAILURE() << "no node " << name;
  return 0;
}

bool has_node(const Model& m, const std::string& name) {
  return std::any_of(m.graph.nodes.begin(), m.graph.nodes.end(), [&](const Node& n) { return n.name == name; });
}

const Node& node(const Model& m, const std::string& name) { return m.graph.nodes[index_of(m, name)]; }

std::map<std::string, Tensor, std::less<>> float_weight() {
  return {{"wd", *Tensor::from_vector<float>(DType::Float, Shape{3, 2}, {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f})}};
}

TEST(QuantizedNodes, AreTheNodesReadingDequantizedActivationsOrWeights) {
  const Model m = qdq_model();
  const auto found = quantized_nodes(m.graph);
  ASSERT_EQ(found.size(), 2u);  // the MatMul and the Relu; not the Add (its DequantizeLinear reads an input)
  EXPECT_EQ(found[0].node, index_of(m, "n_y"));
  ASSERT_EQ(found[0].inputs.size(), 2u);
  EXPECT_FALSE(found[0].inputs[0].weight());
  EXPECT_EQ(found[0].inputs[0].float_value, "x");
  EXPECT_EQ(*found[0].inputs[0].quantize, index_of(m, "n_xq"));
  EXPECT_TRUE(found[0].inputs[1].weight());
  EXPECT_EQ(found[0].inputs[1].float_value, "wd");
  EXPECT_EQ(found[1].node, index_of(m, "n_z"));
  EXPECT_TRUE(has_qdq_nodes(m.graph));
  EXPECT_TRUE(quantized_nodes(parse_model(testing::kSquareOverflow).graph).empty());
}

TEST(QuantizedNodes, LeavingOneInFloatRemovesOnlyThePairsNoOtherNodeReads) {
  const Model m = qdq_model();
  const auto found = quantized_nodes(m.graph);
  auto partial = leave_in_float(m, found, {index_of(m, "n_y")}, float_weight());
  ASSERT_TRUE(partial.ok()) << partial.error().message();
  EXPECT_EQ(node(*partial, "n_y").inputs[0], "x");
  EXPECT_EQ(node(*partial, "n_y").inputs[1], "wd_float");
  ASSERT_NE(partial->graph.find_initializer("wd_float"), nullptr);
  EXPECT_FALSE(has_node(*partial, "n_wd"));  // the weight's DequantizeLinear went, with its weight
  EXPECT_EQ(partial->graph.find_initializer("w_q"), nullptr);
  EXPECT_TRUE(has_node(*partial, "n_xq"));   // the Relu still reads x quantized
  EXPECT_TRUE(has_node(*partial, "n_xd"));
  EXPECT_EQ(node(*partial, "n_z").inputs[0], "xd");
  EXPECT_TRUE(has_node(*partial, "n_pd"));   // not a pair of a left node

  auto both = leave_in_float(m, found, {index_of(m, "n_y"), index_of(m, "n_z")}, float_weight());
  ASSERT_TRUE(both.ok()) << both.error().message();
  EXPECT_FALSE(has_node(*both, "n_xq"));
  EXPECT_FALSE(has_node(*both, "n_xd"));
  EXPECT_NE(both->graph.find_initializer("x_scale"), nullptr);  // the input's DequantizeLinear still reads it
  EXPECT_EQ(both->graph.find_initializer("w_scale"), nullptr);
}

// The model with every quantized node in float computes what the float operations give.
TEST(QuantizedNodes, TheModelWithEveryNodeInFloatComputesInFloat) {
  const Model m = qdq_model();
  const auto found = quantized_nodes(m.graph);
  auto in_float = leave_in_float(m, found, {found[0].node, found[1].node}, float_weight());
  ASSERT_TRUE(in_float.ok()) << in_float.error().message();
  auto engine = make_reference_engine(1);
  auto prepared = engine->prepare(*in_float);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  TensorMap feed{{"x", *Tensor::from_vector<float>(DType::Float, Shape{2, 3}, {1.001f, -2, 3, 0.5f, 0.25f, -0.125f})},
                 {"p", *Tensor::from_vector<uint8_t>(DType::UInt8, Shape{2, 2}, {128, 128, 128, 128})}};
  auto out = (*prepared)->run(feed);
  ASSERT_TRUE(out.ok()) << out.error().message();
  const auto z = out->at("z").data<float>();
  EXPECT_FLOAT_EQ(z[0], 1.001f);  // quantized with scale 0.02 it would be 1.0
  const auto y = out->at("y").data<float>();
  EXPECT_FLOAT_EQ(y[0], 1.001f * 0.1f + -2 * 0.3f + 3 * -0.5f);
}

TEST(QuantizedNodes, ANodeThatReadsNothingQuantizedOrAWeightWithoutAFloatValueIsAnError) {
  const Model m = qdq_model();
  const auto found = quantized_nodes(m.graph);
  auto not_quantized = leave_in_float(m, found, {index_of(m, "n_s")}, float_weight());
  ASSERT_FALSE(not_quantized.ok());
  EXPECT_NE(not_quantized.error().message().find("reads no quantized value"), std::string::npos);
  auto no_weight = leave_in_float(m, found, {index_of(m, "n_y")}, {});
  ASSERT_FALSE(no_weight.ok());
  EXPECT_NE(no_weight.error().message().find("'wd'"), std::string::npos) << no_weight.error().message();
}

}  // namespace
}  // namespace reduce
