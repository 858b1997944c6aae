// Optimized engine passes: each fires on a tiny model where its pattern is present, and the optimized
// result equals the reference engine's; disabled or blocked by a requested intermediate, it does not fire.
#include "optimized_support.h"

namespace reduce {
namespace {

using testing::expect_matches_reference;
using testing::parse_model;
using testing::ramp;
using testing::report_of;

TEST(OptimizedPasses, ConstantFoldingEvaluatesConstantSubgraphsOnce) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] X) => (float[2, 3] Y)
<float[3] A = {1.0, 2.0, 3.0}, float[3] B = {0.5, 0.5, 2.0}>
{
  two = Constant <value = float {2.0}> ()
  ab = Mul(A, B)
  c = Mul(ab, two)
  Y = Add(X, c)
}
)");
  const auto report = report_of("opt", m);
  EXPECT_EQ(report.fired("constant-folding"), 2);  // the Constant node is an initializer since import
  EXPECT_EQ(report.nodes_after, 1u);
  expect_matches_reference("opt", m, {{"X", ramp({2, 3})}}, 0);
}

const char* kConvBn = R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[1, 2, 5, 5] X) => (float[1, 3, 5, 5] Y)
<float[3, 2, 3, 3] W = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8, 0.9, 0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8, 0.9,
                        -0.1, 0.2, 0.3, -0.4, 0.5, 0.6, -0.7, 0.8, 0.9, 0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8, 0.9,
                        0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8, -0.9, -0.1, 0.2, 0.3, 0.4, -0.5, 0.6, 0.7, 0.8, -0.9},
 float[3] Bc = {0.1, -0.1, 0.2}, float[3] S = {1.5, 0.5, -1.0}, float[3] Bb = {0.1, 0.2, 0.3},
 float[3] Mean = {0.2, -0.3, 0.1}, float[3] Var = {0.5, 2.0, 0.000001}>
{
  c = Conv <pads = [1, 1, 1, 1]> (X, W, Bc)
  Y = BatchNormalization <epsilon = 0.001> (c, S, Bb, Mean, Var)
}
)";

TEST(OptimizedPasses, ConvBatchNormFoldsIntoTheConvWeights) {
  Model m = parse_model(kConvBn);
  const auto report = report_of("opt", m);
  EXPECT_EQ(report.fired("conv-bn-fold"), 1);
  EXPECT_EQ(report.nodes_after, 1u);
  expect_matches_reference("opt", m, {{"X", ramp({1, 2, 5, 5})}}, 1e-5);
}

TEST(OptimizedPasses, ARequestedIntermediateIsNeverFusedAway) {
  Model m = parse_model(kConvBn);
  EXPECT_EQ(report_of("opt", m, {"Y", "c"}).fired("conv-bn-fold"), 0);
  RunOptions both;
  both.outputs = {"c", "Y"};
  expect_matches_reference("opt", m, {{"X", ramp({1, 2, 5, 5})}}, 1e-5, both);
}

TEST(OptimizedPasses, NoPassDisablesIt) {
  Model m = parse_model(kConvBn);
  const auto report = report_of("opt:no-conv-bn-fold", m);
  EXPECT_EQ(report.fired("conv-bn-fold"), 0);
  EXPECT_EQ(report.nodes_after, 2u);
}

TEST(OptimizedPasses, MatMulPlusConstantBiasBecomesOneGemm) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3, 4] X) => (float[2, 3, 2] Y)
<float[4, 2] W = {0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8}, float[2] B = {1.0, -1.0}>
{
  h = MatMul(X, W)
  Y = Add(h, B)
}
)");
  const auto report = report_of("opt", m);
  EXPECT_EQ(report.fired("matmul-add-gemm"), 1);
  EXPECT_EQ(report.nodes_after, 1u);
  expect_matches_reference("opt", m, {{"X", ramp({2, 3, 4})}}, 1e-6);
}

const char* kLayerNorm = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3, 8] X) => (float[2, 3, 8] Y)
<float[1] Two = {2.0}, float[1] Eps = {0.00001}, float[8] Gamma = {1.0, 0.5, 2.0, -1.0, 1.5, 0.25, 1.0, 3.0},
 float[8] Beta = {0.0, 0.1, 0.2, 0.3, -0.1, -0.2, -0.3, 0.5}>
{
  mean = ReduceMean <axes = [-1]> (X)
  d = Sub(X, mean)
  p = Pow(d, Two)
  var = ReduceMean <axes = [-1]> (p)
  ve = Add(var, Eps)
  s = Sqrt(ve)
  n = Div(d, s)
  g = Mul(n, Gamma)
  Y = Add(g, Beta)
}
)";

TEST(OptimizedPasses, LayerNormPatternBecomesOneKernel) {
  Model m = parse_model(kLayerNorm);
  const auto report = report_of("opt", m);
  EXPECT_EQ(report.fired("layernorm-fusion"), 1);
  EXPECT_EQ(report.nodes_after, 1u);
  expect_matches_reference("opt", m, {{"X", ramp({2, 3, 8}, -3, 3)}}, 1e-5);
}

const char* kAttention = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 4, 8] Q, float[1, 2, 8, 4] K, float[1, 2, 4, 8] V) => (float[1, 2, 4, 8] Y)
<float Scale = {2.828427}>
{
  scores = MatMul(Q, K)
  scaled = Div(scores, Scale)
  probs = Softmax <axis = -1> (scaled)
  Y = MatMul(probs, V)
}
)";

TEST(OptimizedPasses, AttentionPatternBecomesOneKernel) {
  Model m = parse_model(kAttention);
  const auto report = report_of("opt", m);
  EXPECT_EQ(report.fired("attention-fusion"), 1);
  EXPECT_EQ(report.nodes_after, 1u);
  expect_matches_reference("opt", m, {{"Q", ramp({1, 2, 4, 8}, -2, 2, 1)}, {"K", ramp({1, 2, 8, 4}, -2, 2, 2)},
                                      {"V", ramp({1, 2, 4, 8}, -1, 1, 3)}}, 1e-6);
}

TEST(OptimizedPasses, ActivationFusesIntoItsProducer) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 4, 4] X, float[3, 2] A) => (float[1, 3, 4, 4] Y, float[3, 3] Z)
<float[3, 2, 1, 1] W = {0.5, -1.0, 1.5, 0.25, -0.75, 1.0}, float[2, 3] M = {1.0, -2.0, 0.5, 0.25, 1.0, -1.0},
 float Lo = {-0.5}, float Hi = {0.5}>
{
  c = Conv(X, W)
  Y = Relu(c)
  mm = MatMul(A, M)
  Z = Clip(mm, Lo, Hi)
}
)");
  const auto report = report_of("opt", m);
  EXPECT_EQ(report.fired("activation-fusion"), 2);
  EXPECT_EQ(report.nodes_after, 2u);
  expect_matches_reference("opt", m, {{"X", ramp({1, 2, 4, 4})}, {"A", ramp({3, 2})}}, 1e-6);
}

TEST(OptimizedPasses, StaticBatchOneBroadcastUsesTheSpecializedKernel) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 3, 2, 4] X, float[1, 1, 2, 4] B) => (float[1, 3, 2, 4] Y)
{
  Y = Mul(X, B)
}
)");
  EXPECT_EQ(report_of("opt", m).fired("static-broadcast"), 1);
  expect_matches_reference("opt", m, {{"X", ramp({1, 3, 2, 4}, -1, 1, 1)}, {"B", ramp({1, 1, 2, 4}, -1, 1, 2)}}, 0);
}

TEST(OptimizedPasses, BroadcastWithDynamicOrLargerBatchKeepsTheGenericKernel) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3, 2, 4] X, float[N, 1, 2, 4] B) => (float[2, 3, 2, 4] Y, float[2, 3, 2, 4] Z)
<float[2, 1, 2, 4] C = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0}>
{
  Y = Add(X, B)
  Z = Add(X, C)
}
)");
  EXPECT_EQ(report_of("opt", m).fired("static-broadcast"), 0);
}

// The standard Attention op with what the fused kernel takes from the reference op (mask, KV cache,
// grouped-query heads, causal frontier, softcap) and its present key/value outputs.
TEST(OptimizedPasses, AttentionFusionRunsTheStandardAttentionOpAsItsKernel) {
  Model m = parse_model(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[2, 3, 16] Q, float[2, 3, 8] K, float[2, 3, 8] V, float[2, 2, 2, 4] PK, float[2, 2, 2, 4] PV, float[3, 5] M)
  => (float[2, 3, 16] Y, float[2, 2, 5, 4] PKO, float[2, 2, 5, 4] PVO)
{
  Y, PKO, PVO = Attention <q_num_heads = 4, kv_num_heads = 2, is_causal = 1, softcap = 3.0> (Q, K, V, M, PK, PV)
}
)");
  const auto report = report_of("opt", m);
  EXPECT_EQ(report.fired("attention-fusion"), 1);
  const TensorMap in = {{"Q", ramp({2, 3, 16}, -2, 2, 1)},   {"K", ramp({2, 3, 8}, -2, 2, 2)},
                        {"V", ramp({2, 3, 8}, -1, 1, 3)},    {"PK", ramp({2, 2, 2, 4}, -2, 2, 4)},
                        {"PV", ramp({2, 2, 2, 4}, -1, 1, 5)}, {"M", ramp({3, 5}, -1, 0, 6)}};
  expect_matches_reference("opt", m, in, 1e-5);
  expect_matches_reference("opt:no-attention-fusion", m, in, 0);
}

TEST(OptimizedPasses, StandardAttentionOpAgreesWithTheReferenceInReducedPrecision) {
  Model m = parse_model(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 2, 4, 8] Q, float[1, 2, 4, 8] K, float[1, 2, 4, 8] V) => (float[1, 2, 4, 8] Y)
{
  Y = Attention (Q, K, V)
}
)");
  const TensorMap in = {{"Q", ramp({1, 2, 4, 8}, -1, 1, 1)}, {"K", ramp({1, 2, 4, 8}, -1, 1, 2)}, {"V", ramp({1, 2, 4, 8}, -1, 1, 3)}};
  EXPECT_EQ(report_of("opt:fp16", m).fired("attention-fusion"), 1);
  expect_matches_reference("opt:fp16", m, in, 5e-3);
  expect_matches_reference("opt:bf16", m, in, 3e-2);
}

TEST(OptimizedPasses, LayerNormFusionRunsRMSNormalizationAsTheUncenteredKernel) {
  // axis 1 of a rank-3 input: the last two axes are normalized, the scale broadcasts over them.
  Model m = parse_model(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[2, 3, 4] X) => (float[2, 3, 4] Y)
<float[4] S = {1.0, 0.5, 2.0, -1.0}>
{
  Y = RMSNormalization <axis = 1, epsilon = 0.001> (X, S)
}
)");
  EXPECT_EQ(report_of("opt", m).fired("layernorm-fusion"), 1);
  const TensorMap in = {{"X", ramp({2, 3, 4}, -2, 2, 1)}};
  expect_matches_reference("opt", m, in, 1e-5);
  expect_matches_reference("opt:fp16", m, in, 1e-2);
}

}  // namespace
}  // namespace reduce
