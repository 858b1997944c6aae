// CenterCropPad, Col2Im, AffineGrid, TensorScatter, LinearAttention, CausalConvWithState and DeformConv
// (opsets 18 to 27): hand-computed values, invalid attributes and shapes, thread-count determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "core/validate.h"
#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;
using namespace op_test;


Tensor random_floats(Shape shape, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return floats(std::move(shape), v);
}


// The outputs with 1 and 4 threads are bit-identical.
void expect_same_for_thread_counts(const std::string& text, const TensorMap& inputs, const std::vector<std::string>& outputs) {
  auto one = run(text, inputs, outputs, 1);
  auto four = run(text, inputs, outputs, 4);
  ASSERT_TRUE(one.ok()) << one.error().message();
  ASSERT_TRUE(four.ok()) << four.error().message();
  for (const auto& name : outputs) {
    const Tensor &a = one->at(name), &b = four->at(name);
    ASSERT_EQ(a.byte_size(), b.byte_size());
    EXPECT_EQ(std::memcmp(a.bytes().data(), b.bytes().data(), a.byte_size()), 0) << name;
  }
}

// -- CenterCropPad

TEST(CenterCropPad, PadsTheShortAxisAndCropsTheLongOneAroundTheCentre) {
  // Rows 2 -> 4: one zero row before, one after. Columns 5 -> 3: keep columns 1..3.
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 5] X, int64[2] S) => (float[4, 3] Y) { Y = CenterCropPad (X, S) }
)", {{"X", floats({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})}, {"S", int64s({2}, {4, 3})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->at("Y").shape(), (Shape{4, 3}));
  expect_near(values(out->at("Y")), {0, 0, 0, 1, 2, 3, 6, 7, 8, 0, 0, 0});
}

TEST(CenterCropPad, OddDifferencesPutTheSmallerHalfFirstOnTheChosenAxes) {
  // Only axis -1: 5 -> 2 crops from 1; the other axis keeps its size.
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 5] X, int64[1] S) => (float[1, 2] Y) { Y = CenterCropPad <axes = [-1]> (X, S) }
)", {{"X", floats({1, 5}, {0, 1, 2, 3, 4})}, {"S", int64s({1}, {2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {1, 2});
  // 2 -> 5 pads one before and two after.
  out = run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2] X, int64[1] S) => (float[5] Y) { Y = CenterCropPad (X, S) }
)", {{"X", floats({2}, {7, 8})}, {"S", int64s({1}, {5})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {0, 7, 8, 0, 0});
}

TEST(CenterCropPad, RepeatedAxesOrAMismatchedShapeAreErrors) {
  const TensorMap in{{"X", floats({2, 2}, {1, 2, 3, 4})}, {"S", int64s({2}, {1, 1})}};
  expect_error(run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 2] X, int64[2] S) => (float[1, 1] Y) { Y = CenterCropPad <axes = [0, -2]> (X, S) }
)", in), "repeat");
  expect_error(run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 2] X, int64[2] S) => (float[1, 1] Y) { Y = CenterCropPad <axes = [0]> (X, S) }
)", in), "shape");
}

// -- Col2Im

TEST(Col2Im, SumsOverlappingBlocksBackIntoTheImage) {
  // Image 1x3, block 1x2: two positions; pixel 1 is covered by both.
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 2, 2] X, int64[2] I, int64[2] B) => (float[1, 1, 1, 3] Y) { Y = Col2Im (X, I, B) }
)", {{"X", floats({1, 2, 2}, {1, 2, 3, 4})}, {"I", int64s({2}, {1, 3})}, {"B", int64s({2}, {1, 2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->at("Y").shape(), (Shape{1, 1, 1, 3}));
  expect_near(values(out->at("Y")), {1, 5, 4});
}

TEST(Col2Im, PadsAndStridesDropTapsOutsideTheImage) {
  // Image 1x2, block 1x2, pads 1 on each side, stride 2: positions start at -1 and 1.
  // Position 0 covers pixels -1 (dropped) and 0; position 1 covers pixels 1 and 2 (dropped).
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 2, 2] X, int64[2] I, int64[2] B) => (float[1, 1, 1, 2] Y) {
  Y = Col2Im <pads = [0, 1, 0, 1], strides = [1, 2]> (X, I, B)
}
)", {{"X", floats({1, 2, 2}, {1, 2, 3, 4})}, {"I", int64s({2}, {1, 2})}, {"B", int64s({2}, {1, 2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {3, 2});
}

TEST(Col2Im, InputNotMatchingTheBlockCountOrAnOddPadCountAreErrors) {
  expect_error(run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 2, 3] X, int64[2] I, int64[2] B) => (float[1, 1, 1, 3] Y) { Y = Col2Im (X, I, B) }
)", {{"X", floats({1, 2, 3}, {1, 2, 3, 4, 5, 6})}, {"I", int64s({2}, {1, 3})}, {"B", int64s({2}, {1, 2})}}), "input must be");
  expect_error(run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 2, 2] X, int64[2] I, int64[2] B) => (float[1, 1, 1, 3] Y) { Y = Col2Im <pads = [0, 1, 0]> (X, I, B) }
)", {{"X", floats({1, 2, 2}, {1, 2, 3, 4})}, {"I", int64s({2}, {1, 3})}, {"B", int64s({2}, {1, 2})}}), "pads");
}

// -- AffineGrid

TEST(AffineGrid, IdentityThetaGivesPixelCentresWithoutAlignCorners) {
  auto out = run(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[1, 2, 3] T, int64[4] S) => (float[1, 2, 2, 2] Y) { Y = AffineGrid (T, S) }
)", {{"T", floats({1, 2, 3}, {1, 0, 0, 0, 1, 0})}, {"S", int64s({4}, {1, 1, 2, 2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->at("Y").shape(), (Shape{1, 2, 2, 2}));
  expect_near(values(out->at("Y")), {-0.5f, -0.5f, 0.5f, -0.5f, -0.5f, 0.5f, 0.5f, 0.5f});
}

TEST(AffineGrid, AlignCornersMapsTheCornersAndThetaScalesAndShifts) {
  // x' = 2x + 1, y' = y on corner coordinates -1 and 1.
  auto out = run(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[1, 2, 3] T, int64[4] S) => (float[1, 2, 2, 2] Y) { Y = AffineGrid <align_corners = 1> (T, S) }
)", {{"T", floats({1, 2, 3}, {2, 0, 1, 0, 1, 0})}, {"S", int64s({4}, {1, 1, 2, 2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {-1, -1, 3, -1, -1, 1, 3, 1});
}

TEST(AffineGrid, ThreeDimensionalGridsListXThenYThenZ) {
  // Size D=2, H=1, W=1 with align_corners: a single pixel sits at -1, so only z varies (-1, 1);
  // theta swaps z and x.
  auto out = run(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[1, 3, 4] T, int64[5] S) => (float[1, 2, 1, 1, 3] Y) { Y = AffineGrid <align_corners = 1> (T, S) }
)", {{"T", floats({1, 3, 4}, {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0})}, {"S", int64s({5}, {1, 1, 2, 1, 1})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {-1, -1, -1, 1, -1, -1});
}

TEST(AffineGrid, ThetaNotMatchingSizeOrBadAlignCornersAreErrors) {
  expect_error(run(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[1, 3, 4] T, int64[4] S) => (float[1, 2, 2, 2] Y) { Y = AffineGrid (T, S) }
)", {{"T", random_floats({1, 3, 4}, 1)}, {"S", int64s({4}, {1, 1, 2, 2})}}), "theta");
  expect_error(run(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[1, 2, 3] T, int64[4] S) => (float[1, 2, 2, 2] Y) { Y = AffineGrid <align_corners = 2> (T, S) }
)", {{"T", random_floats({1, 2, 3}, 1)}, {"S", int64s({4}, {1, 1, 2, 2})}}), "align_corners");
}

// -- TensorScatter

TEST(TensorScatter, CircularModeWrapsTheWriteIndex) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 24]>
g (float[1, 3, 1] P, float[1, 2, 1] U, int64[1] W) => (float[1, 3, 1] Y) { Y = TensorScatter <mode = "circular"> (P, U, W) }
)", {{"P", floats({1, 3, 1}, {1, 2, 3})}, {"U", floats({1, 2, 1}, {10, 20})}, {"W", int64s({1}, {2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {20, 2, 10});
}

TEST(TensorScatter, LinearModeWritesEachBatchAtItsIndexAlongTheAxis) {
  // axis 1 of [2, 3]: batch 0 writes at 0, batch 1 at 2; no write_indices would mean 0 for all.
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 24]>
g (float[2, 3] P, float[2, 1] U, int64[2] W) => (float[2, 3] Y) { Y = TensorScatter <axis = 1> (P, U, W) }
)", {{"P", floats({2, 3}, {0, 0, 0, 0, 0, 0})}, {"U", floats({2, 1}, {5, 6})}, {"W", int64s({2}, {0, 2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {5, 0, 0, 0, 0, 6});
}

TEST(TensorScatter, LinearWritesPastTheEndTheBatchAxisOrABadModeAreErrors) {
  const TensorMap in{{"P", floats({1, 3, 1}, {1, 2, 3})}, {"U", floats({1, 2, 1}, {10, 20})}, {"W", int64s({1}, {2})}};
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 24]>
g (float[1, 3, 1] P, float[1, 2, 1] U, int64[1] W) => (float[1, 3, 1] Y) { Y = TensorScatter (P, U, W) }
)", in), "does not fit");
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 24]>
g (float[1, 3, 1] P, float[1, 2, 1] U, int64[1] W) => (float[1, 3, 1] Y) { Y = TensorScatter <axis = 0> (P, U, W) }
)", in), "batch");
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 24]>
g (float[1, 3, 1] P, float[1, 2, 1] U, int64[1] W) => (float[1, 3, 1] Y) { Y = TensorScatter <mode = "ring"> (P, U, W) }
)", in), "mode");
}

// -- LinearAttention

TEST(LinearAttention, LinearRuleAccumulatesKeyValueProducts) {
  // d_k = d_v = 1: S1 = 1*3 = 3, o1 = 1*3; S2 = 3 + 1*4 = 7, o2 = 2*7.
  auto out = run(R"(
<ir_version: 13, opset_import: ["" : 27]>
g (float[1, 2, 1] Q, float[1, 2, 1] K, float[1, 2, 1] V) => (float[1, 2, 1] Y, float[1, 1, 1, 1] S) {
  Y, S = LinearAttention <q_num_heads = 1, kv_num_heads = 1, update_rule = "linear", scale = 1.0> (Q, K, V)
}
)", {{"Q", floats({1, 2, 1}, {1, 2})}, {"K", floats({1, 2, 1}, {1, 1})}, {"V", floats({1, 2, 1}, {3, 4})}}, {"Y", "S"});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {3, 14});
  expect_near(values(out->at("S")), {7});
}

TEST(LinearAttention, GatedDeltaRuleDecaysThenCorrectsTowardsTheValue) {
  // t1: S = 0, delta = 1*(2 - 0) = 2, S = 1*2 = 2, o = 2.
  // t2: S = 0.5*2 = 1, retrieved = 1*2, delta = 0.5*(3 - 2) = 0.5, S = 1 + 2*0.5 = 2, o = 3*2.
  // The default scale is 1/sqrt(d_k) = 1; past_state starts the recurrence.
  auto out = run(R"(
<ir_version: 13, opset_import: ["" : 27]>
g (float[1, 2, 1] Q, float[1, 2, 1] K, float[1, 2, 1] V, float[1, 1, 1, 1] P, float[1, 2, 1] G, float[1, 2, 1] B)
    => (float[1, 2, 1] Y, float[1, 1, 1, 1] S) {
  Y, S = LinearAttention <q_num_heads = 1, kv_num_heads = 1> (Q, K, V, P, G, B)
}
)", {{"Q", floats({1, 2, 1}, {1, 3})}, {"K", floats({1, 2, 1}, {1, 2})}, {"V", floats({1, 2, 1}, {2, 3})},
     {"P", floats({1, 1, 1, 1}, {0})}, {"G", floats({1, 2, 1}, {0, std::log(0.5f)})}, {"B", floats({1, 2, 1}, {1, 0.5f})}},
                 {"Y", "S"});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {2, 6});
  expect_near(values(out->at("S")), {2});
}

TEST(LinearAttention, QueryHeadsOfAGroupReadTheirSharedKvState) {
  // Two query heads share one KV head with state 5: outputs 1*5 and 2*5.
  auto out = run(R"(
<ir_version: 13, opset_import: ["" : 27]>
g (float[1, 1, 2] Q, float[1, 1, 1] K, float[1, 1, 1] V) => (float[1, 1, 2] Y) {
  Y = LinearAttention <q_num_heads = 2, kv_num_heads = 1, update_rule = "linear"> (Q, K, V)
}
)", {{"Q", floats({1, 1, 2}, {1, 2})}, {"K", floats({1, 1, 1}, {1})}, {"V", floats({1, 1, 1}, {5})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {5, 10});
}

TEST(LinearAttention, BadRuleHeadCountsOrAMissingBetaAreErrors) {
  const TensorMap in{{"Q", floats({1, 1, 2}, {1, 2})}, {"K", floats({1, 1, 2}, {1, 1})}, {"V", floats({1, 1, 2}, {5, 6})}};
  expect_error(run(R"(
<ir_version: 13, opset_import: ["" : 27]>
g (float[1, 1, 2] Q, float[1, 1, 2] K, float[1, 1, 2] V) => (float[1, 1, 2] Y) {
  Y = LinearAttention <q_num_heads = 2, kv_num_heads = 2, update_rule = "softmax"> (Q, K, V)
}
)", in), "update_rule");
  expect_error(run(R"(
<ir_version: 13, opset_import: ["" : 27]>
g (float[1, 1, 2] Q, float[1, 1, 2] K, float[1, 1, 2] V) => (float[1, 1, 2] Y) {
  Y = LinearAttention <q_num_heads = 3, kv_num_heads = 2, update_rule = "linear"> (Q, K, V)
}
)", in), "q_num_heads");
  expect_error(run(R"(
<ir_version: 13, opset_import: ["" : 27]>
g (float[1, 1, 2] Q, float[1, 1, 2] K, float[1, 1, 2] V) => (float[1, 1, 2] Y) {
  Y = LinearAttention <q_num_heads = 2, kv_num_heads = 2, update_rule = "delta"> (Q, K, V)
}
)", in), "beta");
}

TEST(LinearAttention, ResultsDoNotDependOnTheThreadCount) {
  const std::string text = R"(
<ir_version: 13, opset_import: ["" : 27]>
g (float[3, 5, 32] Q, float[3, 5, 16] K, float[3, 5, 24] V, float[3, 5, 16] G, float[3, 5, 2] B)
    => (float[3, 5, 48] Y, float[3, 2, 8, 12] S) {
  Y, S = LinearAttention <q_num_heads = 4, kv_num_heads = 2> (Q, K, V, , G, B)
}
)";
  expect_same_for_thread_counts(text,
                                {{"Q", random_floats({3, 5, 32}, 1)}, {"K", random_floats({3, 5, 16}, 2)},
                                 {"V", random_floats({3, 5, 24}, 3)}, {"G", random_floats({3, 5, 16}, 4, -1, 0)},
                                 {"B", random_floats({3, 5, 2}, 5, 0, 1)}},
                                {"Y", "S"});
}

// -- CausalConvWithState

TEST(CausalConvWithState, ConvolvesThePastStateThenTheInputAndKeepsTheLastTaps) {
  // Padded sequence [5 | 1 2 3], weights [1 2], bias 1: 1+5+2, 1+1+4, 1+2+6; the new state is [3].
  auto out = run(R"(
<ir_version: 13, opset_import: ["" : 27]>
g (float[1, 1, 3] X, float[1, 1, 2] W, float[1] B, float[1, 1, 1] P) => (float[1, 1, 3] Y, float[1, 1, 1] S) {
  Y, S = CausalConvWithState (X, W, B, P)
}
)", {{"X", floats({1, 1, 3}, {1, 2, 3})}, {"W", floats({1, 1, 2}, {1, 2})}, {"B", floats({1}, {1})},
     {"P", floats({1, 1, 1}, {5})}}, {"Y", "S"});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {8, 6, 9});
  expect_near(values(out->at("S")), {3});
}

TEST(CausalConvWithState, SiluIsAppliedAfterTheConvolutionWithZeroInitialState) {
  auto out = run(R"(
<ir_version: 13, opset_import: ["" : 27]>
g (float[1, 1, 2] X, float[1, 1, 2] W) => (float[1, 1, 2] Y, float[1, 1, 1] S) {
  Y, S = CausalConvWithState <activation = "silu"> (X, W)
}
)", {{"X", floats({1, 1, 2}, {1, 2})}, {"W", floats({1, 1, 2}, {0, 1})}}, {"Y", "S"});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {static_cast<float>(1 / (1 + std::exp(-1.0))), static_cast<float>(2 / (1 + std::exp(-2.0)))});
  expect_near(values(out->at("S")), {2});
}

TEST(CausalConvWithState, BadWeightShapeOrActivationAreErrors) {
  const TensorMap in{{"X", floats({1, 2, 2}, {1, 2, 3, 4})}, {"W", floats({1, 1, 2}, {0, 1})}};
  expect_error(run(R"(
<ir_version: 13, opset_import: ["" : 27]>
g (float[1, 2, 2] X, float[1, 1, 2] W) => (float[1, 2, 2] Y) { Y = CausalConvWithState (X, W) }
)", in), "weight");
  expect_error(run(R"(
<ir_version: 13, opset_import: ["" : 27]>
g (float[1, 2, 2] X, float[1, 1, 2] W) => (float[1, 2, 2] Y) { Y = CausalConvWithState <activation = "gelu"> (X, W) }
)", in), "activation");
}

TEST(CausalConvWithState, ResultsDoNotDependOnTheThreadCount) {
  expect_same_for_thread_counts(R"(
<ir_version: 13, opset_import: ["" : 27]>
g (float[8, 128, 40] X, float[128, 1, 4] W, float[128] B, float[8, 128, 3] P) => (float[8, 128, 40] Y, float[8, 128, 3] S) {
  Y, S = CausalConvWithState <activation = "silu"> (X, W, B, P)
}
)", {{"X", random_floats({8, 128, 40}, 1)}, {"W", random_floats({128, 1, 4}, 2)}, {"B", random_floats({128}, 3)},
     {"P", random_floats({8, 128, 3}, 4)}}, {"Y", "S"});
}

// -- DeformConv

TEST(DeformConv, FractionalOffsetsInterpolateWithZerosOutsideAndMaskScales) {
  // X = [1 3] (1x2), 1x1 kernel of weight 1, dx = 0.5 everywhere: x=0.5 gives 2, x=1.5 gives 3/2.
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 19]>
g (float[1, 1, 1, 2] X, float[1, 1, 1, 1] W, float[1, 2, 1, 2] O) => (float[1, 1, 1, 2] Y) { Y = DeformConv (X, W, O) }
)", {{"X", floats({1, 1, 1, 2}, {1, 3})}, {"W", floats({1, 1, 1, 1}, {1})}, {"O", floats({1, 2, 1, 2}, {0, 0, 0.5f, 0.5f})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {2, 1.5f});
  // The mask scales each tap; the bias is added once.
  out = run(R"(
<ir_version: 8, opset_import: ["" : 19]>
g (float[1, 1, 1, 2] X, float[1, 1, 1, 1] W, float[1, 2, 1, 2] O, float[1] B, float[1, 1, 1, 2] M) => (float[1, 1, 1, 2] Y) {
  Y = DeformConv (X, W, O, B, M)
}
)", {{"X", floats({1, 1, 1, 2}, {1, 3})}, {"W", floats({1, 1, 1, 1}, {2})}, {"O", floats({1, 2, 1, 2}, {0, 0, 0, 0})},
     {"B", floats({1}, {10})}, {"M", floats({1, 1, 1, 2}, {0.5f, 0})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {11, 10});
}

TEST(DeformConv, ZeroOffsetsGiveAnOrdinaryConvolution) {
  const TensorMap in{{"X", random_floats({1, 2, 4, 4}, 1)}, {"W", random_floats({3, 2, 2, 2}, 2)},
                     {"O", floats({1, 8, 3, 3}, std::vector<float>(72, 0))}};
  auto deform = run(R"(
<ir_version: 8, opset_import: ["" : 19]>
g (float[1, 2, 4, 4] X, float[3, 2, 2, 2] W, float[1, 8, 3, 3] O) => (float[1, 3, 3, 3] Y) { Y = DeformConv (X, W, O) }
)", in);
  auto conv = run(R"(
<ir_version: 8, opset_import: ["" : 19]>
g (float[1, 2, 4, 4] X, float[3, 2, 2, 2] W) => (float[1, 3, 3, 3] Y) { Y = Conv (X, W) }
)", {{"X", in.at("X")}, {"W", in.at("W")}});
  ASSERT_TRUE(deform.ok()) << deform.error().message();
  ASSERT_TRUE(conv.ok()) << conv.error().message();
  expect_near(values(deform->at("Y")), values(conv->at("Y")));
}

TEST(DeformConv, OffsetOfTheWrongShapeOrBadOffsetGroupAreErrors) {
  const TensorMap in{{"X", random_floats({1, 2, 3, 3}, 1)}, {"W", random_floats({1, 2, 2, 2}, 2)},
                     {"O", random_floats({1, 4, 2, 2}, 3)}};
  expect_error(run(R"(
<ir_version: 8, opset_import: ["" : 19]>
g (float[1, 2, 3, 3] X, float[1, 2, 2, 2] W, float[1, 4, 2, 2] O) => (float[1, 1, 2, 2] Y) { Y = DeformConv (X, W, O) }
)", in), "offset");
  expect_error(run(R"(
<ir_version: 8, opset_import: ["" : 19]>
g (float[1, 2, 3, 3] X, float[1, 2, 2, 2] W, float[1, 4, 2, 2] O) => (float[1, 1, 2, 2] Y) {
  Y = DeformConv <offset_group = 0> (X, W, O)
}
)", in), "offset_group");
}

TEST(DeformConv, ResultsDoNotDependOnTheThreadCount) {
  expect_same_for_thread_counts(R"(
<ir_version: 8, opset_import: ["" : 19]>
g (float[2, 4, 9, 9] X, float[6, 2, 3, 3] W, float[2, 36, 7, 7] O, float[2, 18, 7, 7] M) => (float[2, 6, 7, 7] Y) {
  Y = DeformConv <group = 2, offset_group = 2> (X, W, O, , M)
}
)", {{"X", random_floats({2, 4, 9, 9}, 1)}, {"W", random_floats({6, 2, 3, 3}, 2)}, {"O", random_floats({2, 36, 7, 7}, 3, -2, 2)},
     {"M", random_floats({2, 18, 7, 7}, 4, 0, 1)}}, {"Y"});
}

// -- hostile sizes

TEST(NewOps, AbsurdSizesAreErrorsNotAllocations) {
  ASSERT_FALSE(run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2] X, int64[1] S) => (float[1] Y) { Y = CenterCropPad (X, S) }
)", {{"X", floats({2}, {1, 2})}, {"S", int64s({1}, {int64_t{1} << 62})}}).ok());
  ASSERT_FALSE(run(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[1, 2, 3] T, int64[4] S) => (float[1, 1, 1, 2] Y) { Y = AffineGrid (T, S) }
)", {{"T", random_floats({1, 2, 3}, 1)}, {"S", int64s({4}, {1, 1, int64_t{1} << 40, int64_t{1} << 40})}}).ok());
  ASSERT_FALSE(run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 1, 1] X, int64[2] I, int64[2] B) => (float[1, 1, 1, 1] Y) { Y = Col2Im (X, I, B) }
)", {{"X", floats({1, 1, 1}, {1})}, {"I", int64s({2}, {int64_t{1} << 31, int64_t{1} << 31})}, {"B", int64s({2}, {1, 1})}}).ok());
  ASSERT_FALSE(run(R"(
<ir_version: 10, opset_import: ["" : 24]>
g (float[1, 3, 1] P, float[1, 2, 1] U, int64[1] W) => (float[1, 3, 1] Y) { Y = TensorScatter (P, U, W) }
)", {{"P", floats({1, 3, 1}, {1, 2, 3})}, {"U", floats({1, 2, 1}, {10, 20})},
     {"W", int64s({1}, {std::numeric_limits<int64_t>::max()})}}).ok());
  // Circular mode wraps even the largest index without overflowing: max % 3 = 1.
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 24]>
g (float[1, 3, 1] P, float[1, 2, 1] U, int64[1] W) => (float[1, 3, 1] Y) { Y = TensorScatter <mode = "circular"> (P, U, W) }
)", {{"P", floats({1, 3, 1}, {1, 2, 3})}, {"U", floats({1, 2, 1}, {10, 20})},
     {"W", int64s({1}, {std::numeric_limits<int64_t>::max()})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {1, 10, 20});
}

// -- required inputs (ONNX 1.12 has no schema for these ops; the validator states their arity)

TEST(NewOps, AnOmittedRequiredInputIsAnErrorNotANullInput) {
  struct Case {
    const char* op;
    int64_t opset;
    size_t required;
  };
  const Case cases[] = {{"CenterCropPad", 18, 2}, {"Col2Im", 18, 3},          {"DeformConv", 19, 3},
                        {"AffineGrid", 20, 2},    {"TensorScatter", 24, 2},   {"LinearAttention", 27, 3},
                        {"CausalConvWithState", 27, 2}};
  auto engine = make_reference_engine(1);
  for (const auto& c : cases)
    for (size_t k = 0; k < c.required; ++k) {
      Model m = one_node(c.op, c.opset, c.required);
      m.graph.nodes[0].inputs[k] = "";
      const std::string expected = "input " + std::to_string(k) + " is required";
      Status s = validate_model(m);
      ASSERT_FALSE(s.ok()) << c.op << " without input " << k;
      EXPECT_NE(s.error().what.find(expected), std::string::npos) << s.error().what;
      // The executor checks too: models built in memory need not be validated.
      TensorMap feeds;
      for (size_t j = 0; j < c.required; ++j)
        if (j != k) feeds["X" + std::to_string(j)] = Tensor::allocate(DType::Float, {2, 3}).value();
      m.graph.inputs.erase(m.graph.inputs.begin() + static_cast<std::ptrdiff_t>(k));
      auto prepared = engine->prepare(m);
      ASSERT_TRUE(prepared.ok()) << prepared.error().what;
      auto out = (*prepared)->run(feeds);
      ASSERT_FALSE(out.ok()) << c.op;
      EXPECT_NE(out.error().what.find(expected), std::string::npos) << out.error().what;
    }
}

}  // namespace
}  // namespace reduce
