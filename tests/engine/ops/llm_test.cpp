// Attention, RotaryEmbedding, LinearAttention, CausalConvWithState and TensorScatter (ops/llm/, opsets
// 23 to 27): hand-computed values, invalid attributes and shapes, thread-count determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace op_test;

// -- RotaryEmbedding

constexpr const char* kRotary = R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 1, 1, 4] X, float[2, 2] C, float[2, 2] S, int64[1, 1] P) => (float[1, 1, 1, 4] Y) {
  Y = RotaryEmbedding <ATTRS> (X, C, S, P)
}
)";

std::string rotary(const std::string& attrs) {
  std::string text = kRotary;
  return text.replace(text.find("ATTRS"), 5, attrs);
}

// Cache row 0 is the identity rotation; row 1 rotates the first pair by 90 degrees, the second by 0.
TensorMap rotary_inputs(int64_t position) {
  return {{"X", floats({1, 1, 1, 4}, {1, 2, 3, 4})},
          {"C", floats({2, 2}, {1, 1, 0, 1})},
          {"S", floats({2, 2}, {0, 0, 1, 0})},
          {"P", int64s({1, 1}, {position})}};
}

TEST(RotaryEmbedding, RotatesTheHalvesPairwiseAtTheGivenPosition) {
  // Pairs (x0, x2) and (x1, x3): (cos*x1 - sin*x2, sin*x1 + cos*x2).
  auto out = run(rotary("interleaved = 0"), rotary_inputs(1));
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {-3, 2, 1, 4});
  auto identity = run(rotary("interleaved = 0"), rotary_inputs(0));
  ASSERT_TRUE(identity.ok()) << identity.error().message();
  expect_near(values(identity->at("Y")), {1, 2, 3, 4});
}

TEST(RotaryEmbedding, InterleavedRotatesAdjacentPairs) {
  auto out = run(rotary("interleaved = 1"), rotary_inputs(1));
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {-2, 1, 3, 4});
}

TEST(RotaryEmbedding, ThreeDimensionalInputWithAPartialRotaryDim) {
  // Two heads of size 4; only the first 2 features of each head rotate (one pair: cos 0, sin 1).
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 1, 8] X, float[1, 1, 1] C, float[1, 1, 1] S) => (float[1, 1, 8] Y) {
  Y = RotaryEmbedding <num_heads = 2, rotary_embedding_dim = 2> (X, C, S)
}
)", {{"X", floats({1, 1, 8}, {1, 2, 3, 4, 5, 6, 7, 8})}, {"C", floats({1, 1, 1}, {0})}, {"S", floats({1, 1, 1}, {1})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {-2, 1, 3, 4, -6, 5, 7, 8});
}

TEST(RotaryEmbedding, InvalidAttributesAndPositionsAreErrors) {
  expect_error(run(rotary("interleaved = 2"), rotary_inputs(0)), "interleaved");
  expect_error(run(rotary("rotary_embedding_dim = 3"), rotary_inputs(0)), "rotary_embedding_dim");
  expect_error(run(rotary("rotary_embedding_dim = -1"), rotary_inputs(0)), "rotary_embedding_dim");
  expect_error(run(rotary("interleaved = 0"), rotary_inputs(2)), "position id 2");    // past the cache
  expect_error(run(rotary("interleaved = 0"), rotary_inputs(-1)), "position id -1");  // negative
  // A 3-D input without num_heads.
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 1, 4] X, float[1, 1, 2] C, float[1, 1, 2] S) => (float[1, 1, 4] Y) { Y = RotaryEmbedding (X, C, S) }
)", {{"X", floats({1, 1, 4}, {1, 2, 3, 4})}, {"C", floats({1, 1, 2}, {1, 1})}, {"S", floats({1, 1, 2}, {0, 0})}}),
               "num_heads");
}

// -- Attention

// With scale ln 3 the scores of keys (1, 0) and (0, 1) for the query (1, 0) are ln 3 and 0: softmax
// weights 3/4 and 1/4, so values 10 and 20 give 12.5.
constexpr float kLn3 = 1.0986122887f;
const std::string kScale = "scale = 1.0986122887";

TensorMap attention_inputs(Shape q_shape, std::vector<float> q) {
  return {{"Q", floats(std::move(q_shape), std::move(q))},
          {"K", floats({1, 1, 2, 2}, {1, 0, 0, 1})},
          {"V", floats({1, 1, 2, 1}, {10, 20})}};
}

TEST(Attention, SoftmaxOfScaledScoresWeightsTheValues) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 1, 1, 2] Q, float[1, 1, 2, 2] K, float[1, 1, 2, 1] V) => (float[1, 1, 1, 1] Y, float[1, 1, 1, 2] QK) {
  Y, , , QK = Attention <)" + kScale + R"(> (Q, K, V)
}
)", attention_inputs({1, 1, 1, 2}, {1, 0}), {"Y", "QK"});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {12.5f});
  expect_near(values(out->at("QK")), {kLn3, 0});
}

TEST(Attention, CausalQueriesSeeOnlyEarlierKeys) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 1, 2, 2] Q, float[1, 1, 2, 2] K, float[1, 1, 2, 1] V) => (float[1, 1, 2, 1] Y) {
  Y = Attention <is_causal = 1, )" + kScale + R"(> (Q, K, V)
}
)", attention_inputs({1, 1, 2, 2}, {1, 0, 1, 0}));
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {10, 12.5f});
}

TEST(Attention, BoolMaskFalseExcludesAKeyAndAFullyMaskedRowGivesZeros) {
  const std::string model = R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 1, 1, 2] Q, float[1, 1, 2, 2] K, float[1, 1, 2, 1] V, bool[1, 2] M) => (float[1, 1, 1, 1] Y) {
  Y = Attention (Q, K, V, M)
}
)";
  TensorMap in = attention_inputs({1, 1, 1, 2}, {1, 0});
  in["M"] = bools({1, 2}, {false, true});
  auto out = run(model, in);
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {20});
  in["M"] = bools({1, 2}, {false, false});
  out = run(model, in);
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {0});
}

TEST(Attention, GroupedQueryHeadsShareTheKeyValueHeadIn3D) {
  // Two query heads of size 2 share one KV head; Y is [batch, q_len, q_heads * v_head].
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 1, 4] Q, float[1, 2, 2] K, float[1, 2, 1] V) => (float[1, 1, 2] Y) {
  Y = Attention <q_num_heads = 2, kv_num_heads = 1, )" + kScale + R"(> (Q, K, V)
}
)", {{"Q", floats({1, 1, 4}, {1, 0, 0, 1})}, {"K", floats({1, 2, 2}, {1, 0, 0, 1})}, {"V", floats({1, 2, 1}, {10, 20})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {12.5f, 17.5f});
}

TEST(Attention, PastKeysAndValuesComeBeforeTheNewOnes) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 1, 1, 2] Q, float[1, 1, 1, 2] K, float[1, 1, 1, 1] V, float[1, 1, 1, 2] PK, float[1, 1, 1, 1] PV)
  => (float[1, 1, 1, 1] Y, float[1, 1, 2, 2] K2, float[1, 1, 2, 1] V2) {
  Y, K2, V2 = Attention <)" + kScale + R"(> (Q, K, V, , PK, PV)
}
)", {{"Q", floats({1, 1, 1, 2}, {1, 0})}, {"K", floats({1, 1, 1, 2}, {0, 1})}, {"V", floats({1, 1, 1, 1}, {20})},
     {"PK", floats({1, 1, 1, 2}, {1, 0})}, {"PV", floats({1, 1, 1, 1}, {10})}},
                 {"Y", "K2", "V2"});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {12.5f});
  expect_near(values(out->at("K2")), {1, 0, 0, 1});
  expect_near(values(out->at("V2")), {10, 20});
}

TEST(Attention, NonpadKvSeqlenHidesThePaddedKeysInOpset24) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 24]>
g (float[1, 1, 1, 2] Q, float[1, 1, 2, 2] K, float[1, 1, 2, 1] V, int64[1] L) => (float[1, 1, 1, 1] Y) {
  Y = Attention (Q, K, V, , , , L)
}
)", [] {
    TensorMap in = attention_inputs({1, 1, 1, 2}, {1, 0});
    in["L"] = int64s({1}, {1});
    return in;
  }());
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {10});
}

TEST(Attention, Opset25WindowsBoundHowFarBeforeAndAfterTheQueryAKeyMayBe) {
  // Query 0 against keys 0 and 1: a right window of 0 excludes key 1 (one after the query).
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 25]>
g (float[1, 1, 1, 2] Q, float[1, 1, 2, 2] K, float[1, 1, 2, 1] V) => (float[1, 1, 1, 1] Y) {
  Y = Attention <left_window_size = 0, right_window_size = 0> (Q, K, V)
}
)", attention_inputs({1, 1, 1, 2}, {1, 0}));
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {10});
}

TEST(Attention, InvalidAttributesAndShapesAreErrors) {
  const auto model = [](const std::string& attrs) {
    return R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 1, 1, 2] Q, float[1, 1, 2, 2] K, float[1, 1, 2, 1] V) => (float[1, 1, 1, 1] Y) {
  Y = Attention <)" + attrs + R"(> (Q, K, V)
}
)";
  };
  const TensorMap in = attention_inputs({1, 1, 1, 2}, {1, 0});
  for (const char* attrs : {"is_causal = 2", "qk_matmul_output_mode = 4", "softmax_precision = 7", "q_num_heads = -1",
                            "left_window_size = 1"}) {
    const std::string attrs_text = attrs;
    expect_error(run(model(attrs), in), attrs_text.substr(0, attrs_text.find(' ')));
  }
  // Three query heads cannot share two KV heads.
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 3, 1, 2] Q, float[1, 2, 2, 2] K, float[1, 2, 2, 1] V) => (float[1, 3, 1, 1] Y) { Y = Attention (Q, K, V) }
)", {{"Q", floats({1, 3, 1, 2}, {1, 0, 1, 0, 1, 0})}, {"K", floats({1, 2, 2, 2}, {1, 0, 0, 1, 1, 0, 0, 1})},
     {"V", floats({1, 2, 2, 1}, {1, 2, 3, 4})}}),
               "not a multiple");
  // 3-D inputs need the head counts.
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 1, 2] Q, float[1, 2, 2] K, float[1, 2, 1] V) => (float[1, 1, 1] Y) { Y = Attention (Q, K, V) }
)", {{"Q", floats({1, 1, 2}, {1, 0})}, {"K", floats({1, 2, 2}, {1, 0, 0, 1})}, {"V", floats({1, 2, 1}, {10, 20})}}),
               "q_num_heads");
}

TEST(Attention, ResultsAreBitIdenticalForAnyThreadCount) {
  const std::string model = R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[2, 4, 33, 8] Q, float[2, 2, 33, 8] K, float[2, 2, 33, 8] V) => (float[2, 4, 33, 8] Y) {
  Y = Attention <is_causal = 1, softcap = 3.0> (Q, K, V)
}
)";
  std::mt19937 gen(7);
  std::normal_distribution<float> dist(0, 1);
  const auto random = [&](Shape s, size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = dist(gen);
    return floats(std::move(s), v);
  };
  const TensorMap in{{"Q", random({2, 4, 33, 8}, 2 * 4 * 33 * 8)},
                     {"K", random({2, 2, 33, 8}, 2 * 2 * 33 * 8)},
                     {"V", random({2, 2, 33, 8}, 2 * 2 * 33 * 8)}};
  auto one = run(model, in, {"Y"}, 1), many = run(model, in, {"Y"}, 4);
  ASSERT_TRUE(one.ok() && many.ok());
  EXPECT_EQ(values(one->at("Y")), values(many->at("Y")));
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

}  // namespace
}  // namespace reduce
