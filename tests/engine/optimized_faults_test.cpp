// The optimized engine's fault catalog: each fault fires on its minimal pattern (wrong values, NaN or
// a prepare error) and stays silent when its trigger is not met or the fault is not requested.
#include "optimized_support.h"

namespace reduce {
namespace {

using testing::expect_matches_reference;
using testing::floats;
using testing::has_nan_or_inf;
using testing::max_abs_diff;
using testing::parse_model;
using testing::ramp;
using testing::report_of;
using testing::run_spec;

// --- broadcast-batch1 ---
Model broadcast_model(int batch) {
  const std::string b = std::to_string(batch);
  return parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[)" + b + R"(, 3, 2, 4] X, float[)" + b + R"(, 1, 2, 4] B) => (float[)" + b + R"(, 3, 2, 4] Y)
{
  Y = Add(X, B)
}
)");
}

TensorMap broadcast_inputs(int64_t batch) {
  return {{"X", ramp({batch, 3, 2, 4}, -1, 1, 1)}, {"B", ramp({batch, 1, 2, 4}, -1, 1, 2)}};
}

TEST(OptimizedFaults, BroadcastBatch1GivesWrongValuesForAChannelBroadcastAtBatch1) {
  Model m = broadcast_model(1);
  EXPECT_TRUE(report_of("opt:fault=broadcast-batch1", m).armed(Fault::BroadcastBatch1));
  const TensorMap in = broadcast_inputs(1);
  EXPECT_GT(max_abs_diff(run_spec("ref", m, in).at("Y"), run_spec("opt:fault=broadcast-batch1", m, in).at("Y")), 0.01);
}

TEST(OptimizedFaults, BroadcastBatch1FiresWhateverReadsTheResult) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 3, 2, 4] X, float[1, 1, 2, 4] B) => (float[1, 3, 2, 4] Y)
{
  s = Add(X, B)
  Y = Relu(s)
}
)");
  EXPECT_TRUE(report_of("opt:fault=broadcast-batch1", m).armed(Fault::BroadcastBatch1));
  const TensorMap in = broadcast_inputs(1);
  EXPECT_GT(max_abs_diff(run_spec("ref", m, in).at("Y"), run_spec("opt:fault=broadcast-batch1", m, in).at("Y")), 0.01);
}

TEST(OptimizedFaults, BroadcastBatch1IsSilentAtBatch2) {
  Model m = broadcast_model(2);
  EXPECT_FALSE(report_of("opt:fault=broadcast-batch1", m).armed(Fault::BroadcastBatch1));
  expect_matches_reference("opt:fault=broadcast-batch1", m, broadcast_inputs(2), 0);
}

TEST(OptimizedFaults, BroadcastBatch1IsSilentWithoutTheFault) {
  expect_matches_reference("opt", broadcast_model(1), broadcast_inputs(1), 0);
}

// --- attention-unstable-softmax ---
const char* kAttention = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 4, 8] Q, float[1, 8, 4] K, float[1, 4, 8] V) => (float[1, 4, 8] Y)
{
  scores = MatMul(Q, K)
  probs = Softmax <axis = -1> (scores)
  Y = MatMul(probs, V)
}
)";

// Logits up to 8 * 4 * 4 = 128 > 88: exp overflows float without the max subtraction.
TensorMap large_logits() {
  return {{"Q", ramp({1, 4, 8}, 3, 4, 1)}, {"K", ramp({1, 8, 4}, 3, 4, 2)}, {"V", ramp({1, 4, 8}, -1, 1, 3)}};
}

TEST(OptimizedFaults, AttentionUnstableSoftmaxGivesNaNForLargeLogits) {
  Model m = parse_model(kAttention);
  EXPECT_TRUE(report_of("opt:fault=attention-unstable-softmax", m).armed(Fault::AttentionUnstableSoftmax));
  EXPECT_FALSE(has_nan_or_inf(run_spec("ref", m, large_logits()).at("Y")));
  EXPECT_TRUE(has_nan_or_inf(run_spec("opt:fault=attention-unstable-softmax", m, large_logits()).at("Y")));
}

TEST(OptimizedFaults, AttentionUnstableSoftmaxDisappearsWhenTheScoresAreRequested) {
  Model m = parse_model(kAttention);
  EXPECT_FALSE(report_of("opt:fault=attention-unstable-softmax", m, {"Y", "probs"}).armed(Fault::AttentionUnstableSoftmax));
  RunOptions both;
  both.outputs = {"Y", "probs"};
  expect_matches_reference("opt:fault=attention-unstable-softmax", m, large_logits(), 1e-5, both);
}

TEST(OptimizedFaults, AttentionSoftmaxIsStableWithoutTheFault) {
  expect_matches_reference("opt", parse_model(kAttention), large_logits(), 1e-5);
}

// The standard Attention op (opset 23): the optimized engine runs it as its fused attention kernel.
const char* kAttentionOp = R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 2, 4, 8] Q, float[1, 2, 4, 8] K, float[1, 2, 4, 8] V) => (float[1, 2, 4, 8] Y)
{
  Y = Attention <scale = 1.0> (Q, K, V)
}
)";

// Logits of about 8 * 3.5 * 3.5 = 98 > 88.
TensorMap large_op_logits() {
  return {{"Q", ramp({1, 2, 4, 8}, 3, 4, 1)}, {"K", ramp({1, 2, 4, 8}, 3, 4, 2)}, {"V", ramp({1, 2, 4, 8}, -1, 1, 3)}};
}

TEST(OptimizedFaults, AttentionUnstableSoftmaxGivesNaNOnTheStandardAttentionOp) {
  Model m = parse_model(kAttentionOp);
  EXPECT_TRUE(report_of("opt:fault=attention-unstable-softmax", m).armed(Fault::AttentionUnstableSoftmax));
  EXPECT_FALSE(has_nan_or_inf(run_spec("ref", m, large_op_logits()).at("Y")));
  EXPECT_TRUE(has_nan_or_inf(run_spec("opt:fault=attention-unstable-softmax", m, large_op_logits()).at("Y")));
}

TEST(OptimizedFaults, AttentionUnstableSoftmaxIsSilentOnTheStandardAttentionOpWithSmallLogits) {
  Model m = parse_model(kAttentionOp);
  const TensorMap in = {{"Q", ramp({1, 2, 4, 8}, -1, 1, 1)}, {"K", ramp({1, 2, 4, 8}, -1, 1, 2)}, {"V", ramp({1, 2, 4, 8}, -1, 1, 3)}};
  expect_matches_reference("opt:fault=attention-unstable-softmax", m, in, 1e-5);
}

TEST(OptimizedFaults, AttentionUnstableSoftmaxDisappearsWhenTheStandardOpsScoresAreRequested) {
  // Its QK output asked for, the op stays on the reference kernel: nothing fused, no fault.
  Model m = parse_model(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 2, 4, 8] Q, float[1, 2, 4, 8] K, float[1, 2, 4, 8] V) => (float[1, 2, 4, 8] Y, float[1, 2, 4, 4] QK)
{
  Y, , , QK = Attention <scale = 1.0> (Q, K, V)
}
)");
  EXPECT_FALSE(report_of("opt:fault=attention-unstable-softmax", m).armed(Fault::AttentionUnstableSoftmax));
  expect_matches_reference("opt:fault=attention-unstable-softmax", m, large_op_logits(), 1e-5);
}

TEST(OptimizedFaults, StandardAttentionOpSoftmaxIsStableWithoutTheFault) {
  expect_matches_reference("opt", parse_model(kAttentionOp), large_op_logits(), 1e-5);
}

// --- layernorm-drop-eps ---
const char* kLayerNorm = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] X) => (float[2, 4] Y)
<float Two = {2.0}, float Eps = {0.00001}>
{
  mean = ReduceMean <axes = [-1]> (X)
  d = Sub(X, mean)
  p = Pow(d, Two)
  var = ReduceMean <axes = [-1]> (p)
  ve = Add(var, Eps)
  s = Sqrt(ve)
  Y = Div(d, s)
}
)";

// The first row is constant: zero variance.
TensorMap flat_row() { return {{"X", floats({2, 4}, {3, 3, 3, 3, 1, 2, 3, 4})}}; }

TEST(OptimizedFaults, LayerNormDropEpsGivesNaNOnAZeroVarianceRow) {
  Model m = parse_model(kLayerNorm);
  EXPECT_TRUE(report_of("opt:fault=layernorm-drop-eps", m).armed(Fault::LayerNormDropEps));
  EXPECT_FALSE(has_nan_or_inf(run_spec("ref", m, flat_row()).at("Y")));
  EXPECT_TRUE(has_nan_or_inf(run_spec("opt:fault=layernorm-drop-eps", m, flat_row()).at("Y")));
}

TEST(OptimizedFaults, LayerNormDropEpsDisappearsWhenAnIntermediateIsRequested) {
  Model m = parse_model(kLayerNorm);
  EXPECT_FALSE(report_of("opt:fault=layernorm-drop-eps", m, {"Y", "var"}).armed(Fault::LayerNormDropEps));
  RunOptions both;
  both.outputs = {"Y", "var"};
  expect_matches_reference("opt:fault=layernorm-drop-eps", m, flat_row(), 1e-5, both);
}

// The standard RMSNormalization op (opset 23) runs as the uncentered LayerNorm kernel: an all-zero
// row has mean square 0.
const char* kRmsNorm = R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[2, 4] X) => (float[2, 4] Y)
<float[4] S = {1.0, 0.5, 2.0, -1.0}>
{
  Y = RMSNormalization <epsilon = 0.00001> (X, S)
}
)";

TensorMap zero_row() { return {{"X", floats({2, 4}, {0, 0, 0, 0, 1, -2, 3, 4})}}; }

TEST(OptimizedFaults, LayerNormDropEpsGivesNaNOnAnAllZeroRowOfRMSNormalization) {
  Model m = parse_model(kRmsNorm);
  EXPECT_TRUE(report_of("opt:fault=layernorm-drop-eps", m).armed(Fault::LayerNormDropEps));
  EXPECT_FALSE(has_nan_or_inf(run_spec("ref", m, zero_row()).at("Y")));
  EXPECT_TRUE(has_nan_or_inf(run_spec("opt:fault=layernorm-drop-eps", m, zero_row()).at("Y")));
}

TEST(OptimizedFaults, RMSNormalizationKeepsItsEpsilonWithoutTheFault) {
  expect_matches_reference("opt", parse_model(kRmsNorm), zero_row(), 1e-5);
}

// --- conv-bn-fold-eps ---
const char* kConvBn = R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[1, 1, 3, 3] X) => (float[1, 2, 3, 3] Y)
<float[2, 1, 1, 1] W = {1.0, 2.0}, float[2] S = {1.0, 1.0}, float[2] B = {0.0, 0.0}, float[2] Mean = {0.0, 0.0},
 float[2] Var = {0.0001, 1.0}>
{
  c = Conv(X, W)
  Y = BatchNormalization <epsilon = 0.01> (c, S, B, Mean, Var)
}
)";

TEST(OptimizedFaults, ConvBnFoldEpsGivesWrongValuesWhenTheVarianceIsSmall) {
  Model m = parse_model(kConvBn);
  EXPECT_TRUE(report_of("opt:fault=conv-bn-fold-eps", m).armed(Fault::ConvBnFoldEps));
  const TensorMap in = {{"X", ramp({1, 1, 3, 3})}};
  // Channel 0: 1/sqrt(0.0001) = 100 instead of 1/sqrt(0.0101) ~ 9.95.
  EXPECT_GT(max_abs_diff(run_spec("ref", m, in).at("Y"), run_spec("opt:fault=conv-bn-fold-eps", m, in).at("Y")), 1.0);
}

TEST(OptimizedFaults, ConvBnFoldEpsDisappearsWhenTheConvOutputIsRequested) {
  Model m = parse_model(kConvBn);
  EXPECT_FALSE(report_of("opt:fault=conv-bn-fold-eps", m, {"Y", "c"}).armed(Fault::ConvBnFoldEps));
  RunOptions both;
  both.outputs = {"Y", "c"};
  expect_matches_reference("opt:fault=conv-bn-fold-eps", m, {{"X", ramp({1, 1, 3, 3})}}, 1e-5, both);
}

// --- hardsigmoid-default-alpha ---
// A squeeze-excite gate as PyTorch exports it: Conv, then HardSigmoid with alpha 1/6.
Model hard_sigmoid_model(const std::string& attributes, const std::string& outputs = "float[1, 2, 1, 1] Y") {
  return parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 1, 1] X) => ()" + outputs + R"()
<float[2, 2, 1, 1] W = {1.0, 0.5, -0.5, 1.0}>
{
  c = Conv(X, W)
  Y = HardSigmoid )" + attributes + R"( (c)
}
)");
}

const TensorMap kGateInput = {{"X", floats({1, 2, 1, 1}, {1.5f, -1.0f})}};

TEST(OptimizedFaults, HardSigmoidDefaultAlphaGivesWrongValuesForPyTorchsAlpha) {
  Model m = hard_sigmoid_model("<alpha = 0.16666667>");
  EXPECT_TRUE(report_of("opt:fault=hardsigmoid-default-alpha", m).armed(Fault::HardSigmoidDefaultAlpha));
  // c = {1, -1.75}: 1/6 gives {0.667, 0.208}, 0.2 gives {0.7, 0.15}.
  EXPECT_GT(max_abs_diff(run_spec("ref", m, kGateInput).at("Y"), run_spec("opt:fault=hardsigmoid-default-alpha", m, kGateInput).at("Y")),
            0.03);
  expect_matches_reference("opt", m, kGateInput, 1e-6);
}

TEST(OptimizedFaults, HardSigmoidDefaultAlphaIsSilentWithTheDefaultParameters) {
  Model m = hard_sigmoid_model("");
  EXPECT_FALSE(report_of("opt:fault=hardsigmoid-default-alpha", m).armed(Fault::HardSigmoidDefaultAlpha));
  expect_matches_reference("opt:fault=hardsigmoid-default-alpha", m, kGateInput, 1e-6);
}

TEST(OptimizedFaults, HardSigmoidDefaultAlphaNeedsTheFusion) {
  // The Conv's output requested: nothing fuses, the reference HardSigmoid reads its attributes.
  Model m = hard_sigmoid_model("<alpha = 0.16666667>", "float[1, 2, 1, 1] Y, float[1, 2, 1, 1] c");
  EXPECT_FALSE(report_of("opt:fault=hardsigmoid-default-alpha", m, {"Y", "c"}).armed(Fault::HardSigmoidDefaultAlpha));
  RunOptions both;
  both.outputs = {"Y", "c"};
  expect_matches_reference("opt:fault=hardsigmoid-default-alpha", m, kGateInput, 1e-6, both);
}

// --- cast-fp16-conflict ---
const char* kCast = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64[3] X) => (float[3] Y)
{
  Y = Cast <to = 1> (X)
}
)";

TEST(OptimizedFaults, CastFp16ConflictFailsPrepareInFp16) {
  Model m = parse_model(kCast);
  m.graph.nodes[0].name = "to_float";
  auto prepared = make_engine("opt:fp16,fault=cast-fp16-conflict").value()->prepare(m);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.error().what, "Cast layer to_float: output type conflicts with precision constraint");
  EXPECT_FALSE(make_engine("opt:bf16,fault=cast-fp16-conflict").value()->prepare(m).ok());
}

TEST(OptimizedFaults, CastFp16ConflictIsSilentInFp32OrWithoutTheFault) {
  Model m = parse_model(kCast);
  EXPECT_TRUE(make_engine("opt:fault=cast-fp16-conflict").value()->prepare(m).ok());
  EXPECT_TRUE(make_engine("opt:fp16").value()->prepare(m).ok());
}

// --- resize-half-pixel ---
Model resize_model(const std::string& mode, const std::string& ctm) {
  return parse_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 1, 2, 3] X) => (float[1, 1, 4, 6] Y)
<float[4] Scales = {1.0, 1.0, 2.0, 2.0}>
{
  Y = Resize <mode = ")" + mode + R"(", coordinate_transformation_mode = ")" + ctm + R"("> (X, , Scales)
}
)");
}

TEST(OptimizedFaults, ResizeHalfPixelShiftsALinearHalfPixelResize) {
  Model m = resize_model("linear", "half_pixel");
  EXPECT_TRUE(report_of("opt:fault=resize-half-pixel", m).armed(Fault::ResizeHalfPixel));
  const TensorMap in = {{"X", floats({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6})}};
  EXPECT_GT(max_abs_diff(run_spec("ref", m, in).at("Y"), run_spec("opt:fault=resize-half-pixel", m, in).at("Y")), 0.1);
}

TEST(OptimizedFaults, ResizeHalfPixelIsSilentForOtherModesAndCoordinates) {
  const TensorMap in = {{"X", floats({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6})}};
  EXPECT_FALSE(report_of("opt:fault=resize-half-pixel", resize_model("linear", "align_corners")).armed(Fault::ResizeHalfPixel));
  expect_matches_reference("opt:fault=resize-half-pixel", resize_model("linear", "align_corners"), in, 0);
  expect_matches_reference("opt:fault=resize-half-pixel", resize_model("nearest", "half_pixel"), in, 0);
}

// --- quantize-half-away ---
Model quantize_model(const std::string& scale_type_and_shape) {
  return parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4] X) => (float[4] Y)
<)" + scale_type_and_shape + R"(, int8 z = {0}>
{
  q = QuantizeLinear(X, s, z)
  Y = DequantizeLinear(q, s, z)
}
)");
}

TEST(OptimizedFaults, QuantizeHalfAwayRoundsTiesAwayFromZero) {
  Model m = quantize_model("float s = {1.0}");
  EXPECT_TRUE(report_of("opt:fault=quantize-half-away", m).armed(Fault::QuantizeHalfAway));
  const TensorMap in = {{"X", floats({4}, {0.5f, 1.5f, 2.5f, -0.5f})}};
  const Tensor ref = run_spec("ref", m, in).at("Y");
  const Tensor opt = run_spec("opt:fault=quantize-half-away", m, in).at("Y");
  EXPECT_EQ(std::vector<float>(ref.data<float>().begin(), ref.data<float>().end()), (std::vector<float>{0, 2, 2, 0}));
  EXPECT_EQ(std::vector<float>(opt.data<float>().begin(), opt.data<float>().end()), (std::vector<float>{1, 2, 3, -1}));
}

TEST(OptimizedFaults, QuantizeHalfAwayIsSilentWithoutTiesAndForPerAxisScales) {
  expect_matches_reference("opt:fault=quantize-half-away", quantize_model("float s = {1.0}"),
                           {{"X", floats({4}, {0.4f, 1.6f, 2.7f, -0.6f})}}, 0);
  Model per_axis = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 2] X) => (float[2, 2] Y)
<float[2] s = {1.0, 1.0}, int8[2] z = {0, 0}>
{
  q = QuantizeLinear <axis = 1> (X, s, z)
  Y = DequantizeLinear <axis = 1> (q, s, z)
}
)");
  expect_matches_reference("opt:fault=quantize-half-away", per_axis, {{"X", floats({2, 2}, {0.5f, 1.5f, 2.5f, -0.5f})}}, 0);
}

// --- input-binding-order ---
const char* kTwoInputs = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] b, float[2] a) => (float[2] Y)
{
  Y = Sub(b, a)
}
)";

TEST(OptimizedFaults, InputBindingOrderBindsByAlphabeticalPosition) {
  Model m = parse_model(kTwoInputs);
  EXPECT_TRUE(report_of("opt:fault=input-binding-order", m).armed(Fault::InputBindingOrder));
  const TensorMap in = {{"a", floats({2}, {1, 2})}, {"b", floats({2}, {10, 20})}};
  EXPECT_EQ(testing::values(run_spec("ref", m, in).at("Y")), (std::vector<float>{9, 18}));
  // "a" (first alphabetically) is bound to the first declared input, b.
  EXPECT_EQ(testing::values(run_spec("opt:fault=input-binding-order", m, in).at("Y")), (std::vector<float>{-9, -18}));
}

TEST(OptimizedFaults, InputBindingOrderIsSilentWithOneInput) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] b) => (float[2] Y)
{
  Y = Neg(b)
}
)");
  EXPECT_FALSE(report_of("opt:fault=input-binding-order", m).armed(Fault::InputBindingOrder));
  expect_matches_reference("opt:fault=input-binding-order", m, {{"b", floats({2}, {1, 2})}}, 0);
}

}  // namespace
}  // namespace reduce
