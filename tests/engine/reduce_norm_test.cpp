// Reductions, normalizations, softmax, quantization and signal ops: behaviour the ONNX node tests leave out.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/half.h"
#include "engine/engine.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;

Tensor floats(Shape shape, std::vector<float> v) { return Tensor::from_vector(DType::Float, std::move(shape), v).value(); }
Tensor int64s(Shape shape, std::vector<int64_t> v) { return Tensor::from_vector(DType::Int64, std::move(shape), v).value(); }

template <typename T>
std::vector<T> values(const Tensor& t) {
  auto d = t.data<T>();
  return {d.begin(), d.end()};
}

// Runs a one-output model with the given engine thread count.
Expected<Tensor> run(const std::string& text, const TensorMap& inputs, const std::string& output = "Y", int threads = 0) {
  Model m = parse_model(text);
  REDUCE_ASSIGN(auto prepared, make_reference_engine(threads)->prepare(m));
  RunOptions options;
  options.outputs = {output};
  REDUCE_ASSIGN(TensorMap out, prepared->run(inputs, options));
  return out.at(output);
}

Tensor random_floats(Shape shape, unsigned seed) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.5f, 3.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return floats(std::move(shape), v);
}

TEST(Reductions, AxesComeFromTheSecondInputSinceReduceSum13) {
  auto y = run(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] X, int64[1] A) => (float[2] Y) { Y = ReduceSum <keepdims = 0> (X, A) }
)", {{"X", floats({2, 3}, {1, 2, 3, 4, 5, 6})}, {"A", int64s({1}, {-1})}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(values<float>(*y), (std::vector<float>{6, 15}));
}

TEST(Reductions, ReduceMean18WithoutAxesAndNoopIsTheIdentity) {
  auto y = run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 2] X) => (float[2, 2] Y) { Y = ReduceMean <noop_with_empty_axes = 1> (X) }
)", {{"X", floats({2, 2}, {1, 2, 3, 4})}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(values<float>(*y), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Reductions, AnEmptySetReducesToTheIdentityOfEachReduction) {
  const std::pair<const char*, float> cases[] = {
      {"ReduceSum", 0.0f},
      {"ReduceProd", 1.0f},
      {"ReduceMax", -std::numeric_limits<float>::infinity()},
      {"ReduceMin", std::numeric_limits<float>::infinity()},
      {"ReduceLogSumExp", -std::numeric_limits<float>::infinity()},
      {"ReduceSumSquare", 0.0f},
  };
  for (const auto& [op, expected] : cases) {
    auto y = run(std::string(R"(
<ir_version: 8, opset_import: ["" : 12]>
g (float[0, 2] X) => (float[2] Y) { Y = )") + op + R"( <keepdims = 0, axes = [0]> (X) }
)", {{"X", Tensor::allocate(DType::Float, {0, 2}).value()}});
    ASSERT_TRUE(y.ok()) << op << ": " << y.error().message();
    EXPECT_EQ(values<float>(*y), (std::vector<float>{expected, expected})) << op;
  }
}

TEST(Reductions, IntegerSumsAreExactBeyondDoublePrecision) {
  const int64_t big = (int64_t{1} << 60) + 1;
  auto y = run(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int64[3] X) => (int64[1] Y) { Y = ReduceSum (X) }
)", {{"X", int64s({3}, {big, big, -big + 3})}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(values<int64_t>(*y), (std::vector<int64_t>{big + 3}));
}

TEST(Reductions, IntegerMeanTruncatesTowardZero) {
  auto y = run(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int32[2, 2] X) => (int32[2] Y) { Y = ReduceMean <keepdims = 0, axes = [1]> (X) }
)", {{"X", Tensor::from_vector(DType::Int32, {2, 2}, std::vector<int32_t>{1, 2, -1, -4}).value()}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(values<int32_t>(*y), (std::vector<int32_t>{1, -2}));
}

TEST(Reductions, RepeatedOrOutOfRangeAxesAreErrors) {
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 2] X, int64[2] A) => (float[1, 1] Y) { Y = ReduceSum (X, A) }
)";
  auto repeated = run(model, {{"X", floats({2, 2}, {1, 2, 3, 4})}, {"A", int64s({2}, {1, -1})}});
  ASSERT_FALSE(repeated.ok());
  EXPECT_NE(repeated.error().what.find("repeated"), std::string::npos) << repeated.error().what;
  auto range = run(model, {{"X", floats({2, 2}, {1, 2, 3, 4})}, {"A", int64s({2}, {0, 2})}});
  ASSERT_FALSE(range.ok());
  EXPECT_NE(range.error().what.find("out of range"), std::string::npos) << range.error().what;
}

TEST(Reductions, Float16IsAccumulatedWideAndRoundedOnce) {
  // 2048 + 1 + 1 is not representable step by step in half (2049 rounds to 2048), but 2050 is.
  std::vector<uint16_t> h{float_to_half(2048), float_to_half(1), float_to_half(1)};
  auto y = run(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float16[3] X) => (float16[1] Y) { Y = ReduceSum (X) }
)", {{"X", Tensor::from_vector(DType::Float16, {3}, h).value()}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(half_to_float(y->data<uint16_t>()[0]), 2050.0f);
}

TEST(Reductions, ResultsDoNotDependOnTheThreadCount) {
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[64, 40, 120] X) => (float[64, 40, 1] Y) { Y = ReduceMean <axes = [-1]> (X) }
)";
  TensorMap in{{"X", random_floats({64, 40, 120}, 1)}};
  auto one = run(model, in, "Y", 1);
  auto two = run(model, in, "Y", 2);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_TRUE(one->equals(*two));
}

TEST(Softmax, BeforeOpset13TheInputIsCoercedTo2DAtAxis) {
  auto y = run(R"(
<ir_version: 8, opset_import: ["" : 11]>
g (float[1, 2, 2] X) => (float[1, 2, 2] Y) { Y = Softmax (X) }
)", {{"X", floats({1, 2, 2}, {0, 0, 0, 0})}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  // One softmax over all four elements (axis 1 onwards), not four over the last axis.
  EXPECT_EQ(values<float>(*y), (std::vector<float>{0.25f, 0.25f, 0.25f, 0.25f}));
}

TEST(Softmax, ResultsDoNotDependOnTheThreadCount) {
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[32, 40, 120] X) => (float[32, 40, 120] Y) { Y = Softmax <axis = 1> (X) }
)";
  TensorMap in{{"X", random_floats({32, 40, 120}, 2)}};
  auto one = run(model, in, "Y", 1);
  auto two = run(model, in, "Y", 2);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_TRUE(one->equals(*two));
}

TEST(BatchNormalization, ResultsDoNotDependOnTheThreadCount) {
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[1, 64, 160, 160] X, float[64] S, float[64] B, float[64] M, float[64] V) => (float[1, 64, 160, 160] Y)
{ Y = BatchNormalization (X, S, B, M, V) }
)";
  Tensor var = random_floats({64}, 7);
  for (auto& v : var.mutable_data<float>()) v = std::abs(v);
  TensorMap in{{"X", random_floats({1, 64, 160, 160}, 3)}, {"S", random_floats({64}, 4)}, {"B", random_floats({64}, 5)},
               {"M", random_floats({64}, 6)}, {"V", var}};
  auto one = run(model, in, "Y", 1);
  auto two = run(model, in, "Y", 2);
  ASSERT_TRUE(one.ok() && two.ok()) << (one.ok() ? two.error().message() : one.error().message());
  EXPECT_TRUE(one->equals(*two));
  // Spot check one element against the formula.
  const float x = in.at("X").data<float>()[160 * 160 * 5 + 7];
  const float expect = (x - in.at("M").data<float>()[5]) / std::sqrt(var.data<float>()[5] + 1e-5f) * in.at("S").data<float>()[5] +
                       in.at("B").data<float>()[5];
  EXPECT_NEAR(one->data<float>()[160 * 160 * 5 + 7], expect, 1e-4f * (1 + std::abs(expect)));
}

TEST(Dropout, TrainingWithANonZeroRatioIsRefusedAsRandom) {
  auto y = run(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4] X, float R, bool T) => (float[4] Y) { Y = Dropout <seed = 3> (X, R, T) }
)", {{"X", floats({4}, {1, 2, 3, 4})}, {"R", floats({}, {0.5f})},
     {"T", Tensor::from_vector(DType::Bool, {}, std::vector<uint8_t>{1}).value()}});
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.error().what.find("random"), std::string::npos) << y.error().what;
}

TEST(Dropout, BeforeOpset10TheMaskHasTheInputType) {
  auto y = run(R"(
<ir_version: 8, opset_import: ["" : 7]>
g (float[3] X) => (float[3] Y, float[3] Z) { Y, Z = Dropout (X) }
)", {{"X", floats({3}, {1, 2, 3})}}, "Z");
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(values<float>(*y), (std::vector<float>{1, 1, 1}));
}

TEST(Quantization, PerAxisScaleMustMatchTheAxis) {
  auto y = run(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] X, float[2] S, uint8[2] Z) => (uint8[2, 3] Y) { Y = QuantizeLinear <axis = 1> (X, S, Z) }
)", {{"X", floats({2, 3}, {1, 2, 3, 4, 5, 6})}, {"S", floats({2}, {1, 2})},
     {"Z", Tensor::from_vector(DType::UInt8, {2}, std::vector<uint8_t>{0, 0}).value()}});
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.error().what.find("per-axis scale"), std::string::npos) << y.error().what;
}

TEST(Quantization, RoundsHalfToEvenAndSaturates) {
  auto y = run(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[5] X, float S, int8 Z) => (int8[5] Y) { Y = QuantizeLinear (X, S, Z) }
)", {{"X", floats({5}, {0.5f, 1.5f, 2.5f, -1000, 1000})}, {"S", floats({}, {1})},
     {"Z", Tensor::from_vector(DType::Int8, {}, std::vector<int8_t>{0}).value()}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(values<int8_t>(*y), (std::vector<int8_t>{0, 2, 2, -128, 127}));
}

TEST(SignalProcessing, ADftLengthNeedingTerabytesIsRefused) {
  auto y = run(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 4, 1] X, int64 L) => (float[1, 4, 2] Y) { Y = DFT (X, L) }
)", {{"X", floats({1, 4, 1}, {1, 2, 3, 4})}, {"L", int64s({}, {int64_t{1} << 40})}});
  ASSERT_FALSE(y.ok());
}

TEST(SignalProcessing, AWindowSizeNeedingTerabytesIsRefused) {
  auto y = run(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64 N) => (float[1] Y) { Y = HannWindow (N) }
)", {{"N", int64s({}, {int64_t{1} << 42})}});
  ASSERT_FALSE(y.ok());
}

TEST(SignalProcessing, InverseDftUndoesTheForwardTransform) {
  auto y = run(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 5, 1] X) => (float[1, 5, 2] Y) { F = DFT (X)  Y = DFT <inverse = 1> (F) }
)", {{"X", floats({1, 5, 1}, {1, -2, 3, 0.5f, 7})}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  const std::vector<float> expected{1, 0, -2, 0, 3, 0, 0.5f, 0, 7, 0};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(y->data<float>()[i], expected[i], 1e-5f) << i;
}

TEST(SignalProcessing, MelEdgesBeyondTheSpectrumAreErrors) {
  auto y = run(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, int64 L, int64 R, float Lo, float Hi) => (float[5, 4] Y) { Y = MelWeightMatrix (M, L, R, Lo, Hi) }
)", {{"M", int64s({}, {4})}, {"L", int64s({}, {8})}, {"R", int64s({}, {8000})}, {"Lo", floats({}, {0})},
     {"Hi", floats({}, {16000})}});
  ASSERT_FALSE(y.ok());
}

TEST(Det, ASingularMatrixHasDeterminantZeroAndPivotingFlipsTheSign) {
  auto y = run(R"(
<ir_version: 8, opset_import: ["" : 11]>
g (float[2, 2, 2] X) => (float[2] Y) { Y = Det (X) }
)", {{"X", floats({2, 2, 2}, {1, 2, 2, 4, 0, 1, 1, 0})}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(values<float>(*y), (std::vector<float>{0, -1}));
}

}  // namespace
}  // namespace reduce
