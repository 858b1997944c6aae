// Elementwise math, comparisons, bit operations, Clip, Pow, Mod, the variadic ops, Softmax, TopK and the
// cumulative ops (ops/math/): broadcasting, wrapping, exact rounding, errors the node tests leave out.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/half.h"
#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace op_test;
using testing::parse_model;

TEST(Elementwise, BroadcastingMixesScalarRowAndColumnOperands) {
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,1,3] A, float[4,1] B) => (float[2,4,3] C)
{
  C = Sub(A, B)
}
)", {{"A", tensor<float>(DType::Float, {2, 1, 3}, {1, 2, 3, 4, 5, 6})},
     {"B", tensor<float>(DType::Float, {4, 1}, {0, 10, 20, 30})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  const auto c = values<float>(out->at("C"));
  ASSERT_EQ(c.size(), 24u);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(c[(i * 4 + j) * 3 + k], float(i * 3 + k + 1 - 10 * j));
}

TEST(Elementwise, LegacyBroadcastAlignsBAtTheAxisAttribute) {
  const char* model = R"(
<ir_version: 3, opset_import: ["" : 6]>
g (float[2,3,2] A, float[3] B) => (float[2,3,2] C)
{
  C = Add <broadcast = 1, axis = 1> (A, B)
}
)";
  auto out = run_all(model, {{"A", tensor<float>(DType::Float, {2, 3, 2}, std::vector<float>(12, 0))},
                         {"B", tensor<float>(DType::Float, {3}, {1, 2, 3})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<float>(out->at("C")), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
}

TEST(Elementwise, LegacyBinaryOpsWithoutBroadcastNeedEqualShapes) {
  auto out = run_all(R"(
<ir_version: 3, opset_import: ["" : 6]>
g (float[2,3] A, float[3] B) => (float[2,3] C)
{
  C = Mul (A, B)
}
)", {{"A", tensor<float>(DType::Float, {2, 3}, std::vector<float>(6, 1))}, {"B", tensor<float>(DType::Float, {3}, {1, 2, 3})}});
  expect_error(out, "broadcast attribute is not set");
}

TEST(Elementwise, IntegerArithmeticWrapsOnOverflow) {
  const int32_t big = std::numeric_limits<int32_t>::max();
  const int32_t small = std::numeric_limits<int32_t>::min();
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int32[2] A, int32[2] B) => (int32[2] S, int32[2] P, int32[2] Q)
{
  S = Add(A, B)
  P = Mul(A, B)
  Q = Div(A, B)
}
)", {{"A", tensor<int32_t>(DType::Int32, {2}, {big, small})}, {"B", tensor<int32_t>(DType::Int32, {2}, {1, -1})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int32_t>(out->at("S")), (std::vector<int32_t>{small, big}));
  EXPECT_EQ(values<int32_t>(out->at("P")), (std::vector<int32_t>{big, small}));
  EXPECT_EQ(values<int32_t>(out->at("Q")), (std::vector<int32_t>{big, small}));
}

TEST(Elementwise, IntegerModuloByZeroIsAnError) {
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64[2] A, int64[2] B) => (int64[2] C)
{
  C = Mod(A, B)
}
)", {{"A", tensor<int64_t>(DType::Int64, {2}, {5, 6})}, {"B", tensor<int64_t>(DType::Int64, {2}, {3, 0})}});
  expect_error(out, "modulo by zero");
}

TEST(Elementwise, FloatModuloNeedsFmod) {
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1] A, float[1] B) => (float[1] C)
{
  C = Mod(A, B)
}
)", {{"A", tensor<float>(DType::Float, {1}, {5})}, {"B", tensor<float>(DType::Float, {1}, {3})}});
  expect_error(out, "fmod must be 1");
}

TEST(Elementwise, ClipBoundsMustBeScalarsOfTheInputType) {
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[3] X, float[2] L) => (float[3] Y)
{
  Y = Clip(X, L)
}
)";
  auto out = run_all(model, {{"X", tensor<float>(DType::Float, {3}, {1, 2, 3})}, {"L", tensor<float>(DType::Float, {2}, {0, 1})}});
  expect_error(out, "bounds must be scalars");
}

TEST(Elementwise, ClipWithMinAboveMaxGivesMax) {
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int32[3] X, int32 L, int32 H) => (int32[3] Y)
{
  Y = Clip(X, L, H)
}
)", {{"X", tensor<int32_t>(DType::Int32, {3}, {-5, 0, 5})}, {"L", tensor<int32_t>(DType::Int32, {}, {3})},
     {"H", tensor<int32_t>(DType::Int32, {}, {1})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int32_t>(out->at("Y")), (std::vector<int32_t>{1, 1, 1}));
}

TEST(Elementwise, IntegerPowIsExactAndNegativeExponentsTruncate) {
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (int64[4] X, int32[4] E) => (int64[4] Y)
{
  Y = Pow(X, E)
}
)", {{"X", tensor<int64_t>(DType::Int64, {4}, {3, 2, -1, 5})}, {"E", tensor<int32_t>(DType::Int32, {4}, {39, -1, -3, 0})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int64_t>(out->at("Y")), (std::vector<int64_t>{4052555153018976267LL, 0, -1, 1}));
}

TEST(Elementwise, MaxAndMinPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] A, float[2] B) => (float[2] X, float[2] N)
{
  X = Max(A, B)
  N = Min(A, B)
}
)", {{"A", tensor<float>(DType::Float, {2}, {nan, 1})}, {"B", tensor<float>(DType::Float, {2}, {0, nan})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  for (const char* name : {"X", "N"})
    for (float v : values<float>(out->at(name))) EXPECT_TRUE(std::isnan(v)) << name;
}

TEST(Elementwise, SumOfManyInputsAccumulatesInDouble) {
  // In float, 1e8 + 1 + 1 + (-1e8) loses both ones; accumulated in double it is exactly 2.
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1] A, float[1] B, float[1] C, float[1] D) => (float[1] S)
{
  S = Sum(A, B, C, D)
}
)", {{"A", tensor<float>(DType::Float, {1}, {1e8f})}, {"B", tensor<float>(DType::Float, {1}, {1})},
     {"C", tensor<float>(DType::Float, {1}, {1})}, {"D", tensor<float>(DType::Float, {1}, {-1e8f})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<float>(out->at("S")), (std::vector<float>{2.0f}));
}

TEST(Elementwise, MismatchedInputTypesAreAnError) {
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1] A, double[1] B) => (bool[1] C)
{
  C = Less(A, B)
}
)", {{"A", tensor<float>(DType::Float, {1}, {1})}, {"B", tensor<double>(DType::Double, {1}, {2})}});
  expect_error(out, "different types");
}

TEST(Elementwise, LargeBroadcastsAreBitIdenticalForAnyThreadCount) {
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,16,160,160] X, float[1,16,1,1] B, bool[1,1,160,1] M) => (float[1,16,160,160] Y)
{
  a = Add(X, B)
  d = Div(a, X)
  h = HardSigmoid <alpha = 0.3> (d)
  c = Clip(a)
  e = Where(M, h, c)
  Y = Mul(e, B)
}
)";
  const size_t n = 16 * 160 * 160;
  std::vector<float> x(n);
  uint32_t state = 12345;
  for (auto& v : x) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / 16777216.0f * 8.0f - 4.0f;
  }
  std::vector<float> b(16);
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.25f * static_cast<float>(i) - 2.0f;
  std::vector<uint8_t> mask(160);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = i % 3 == 0;
  TensorMap in{{"X", tensor<float>(DType::Float, {1, 16, 160, 160}, x)},
               {"B", tensor<float>(DType::Float, {1, 16, 1, 1}, b)},
               {"M", tensor<uint8_t>(DType::Bool, {1, 1, 160, 1}, mask)}};
  auto one = run_all(model, in, 1);
  auto two = run_all(model, in, 2);
  ASSERT_TRUE(one.ok()) << one.error().message();
  ASSERT_TRUE(two.ok()) << two.error().message();
  EXPECT_TRUE(one->at("Y").equals(two->at("Y")));
  // Spot check one element against a direct computation.
  const size_t i = 5 * 160 * 160 + 3 * 160 + 7;  // channel 5, row 3 (mask true)
  const float a = x[i] + b[5];
  const float h = static_cast<float>(std::max(0.0, std::min(1.0, 0.3f * static_cast<double>(a / x[i]) + 0.5)));
  EXPECT_EQ(one->at("Y").data<float>()[i], h * b[5]);
}

TEST(DataMovement, TopKAttributeFormOfOpset1AndTiesGoToTheLowerIndex) {
  auto out = run_all(R"(
<ir_version: 7, opset_import: ["" : 9]>
g (float[6] X) => (float[3] V, int64[3] I) { V, I = TopK<k = 3>(X) }
)",
                       {{"X", floats({6}, {1, 5, 3, 5, 0.0f / 0.0f, 3})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int64_t>(out->at("I")), (std::vector<int64_t>{4, 1, 3}));  // NaN counts as largest
}

TEST(DataMovement, TopKOnFloat16ReturnsTheInputValuesExactly) {
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float16[3] X, int64[1] K) => (float16[2] V, int64[2] I) { V, I = TopK<largest = 0>(X, K) }
)",
                       {{"X", tensor<uint16_t>(DType::Float16, {3}, {float_to_half(2.5f), float_to_half(-1.0f),
                                                                     float_to_half(0.1f)})},
                        {"K", int64s({1}, {2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<uint16_t>(out->at("V")), (std::vector<uint16_t>{float_to_half(-1.0f), float_to_half(0.1f)}));
  EXPECT_EQ(values<int64_t>(out->at("I")), (std::vector<int64_t>{1, 2}));
}

TEST(DataMovement, CumSumOnInt32WrapsAndReverseExclusiveWorks) {
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 14]>
g (int32[3] X, int32 A) => (int32[3] Y) { Y = CumSum<exclusive = 1, reverse = 1>(X, A) }
)",
                       {{"X", tensor<int32_t>(DType::Int32, {3}, {1, INT32_MAX, 2})},
                        {"A", tensor<int32_t>(DType::Int32, {}, {0})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int32_t>(out->at("Y")), (std::vector<int32_t>{INT32_MIN + 1, 2, 0}));
}

TEST(Softmax, BeforeOpset13TheInputIsCoercedTo2DAtAxis) {
  auto y = run_one(R"(
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
  TensorMap in{{"X", normal_floats({32, 40, 120}, 2)}};
  auto one = run_one(model, in, "Y", 1);
  auto two = run_one(model, in, "Y", 2);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_TRUE(one->equals(*two));
}

// -- BitShift

const char* kShiftRight = R"(
<ir_version: 10, opset_import: ["" : 28]>
g (int8[6] X, int8[6] S) => (int8[6] Y) { Y = BitShift <direction = "RIGHT"> (X, S) }
)";

TEST(BitShift, SignedRightShiftIsArithmeticAndOutOfRangeShiftsLeaveOnlyTheSign) {
  auto out = run(kShiftRight, {{"X", tensor<int8_t>(DType::Int8, {6}, {-8, -1, -128, 4, -1, 4})},
                               {"S", tensor<int8_t>(DType::Int8, {6}, {1, 1, 1, 8, -1, 127})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int8_t>(out->at("Y")), (std::vector<int8_t>{-4, -1, -64, 0, -1, 0}));
}

TEST(BitShift, SignedLeftShiftWrapsAndOutOfRangeShiftsGiveZero) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 28]>
g (int8[5] X, int8[5] S) => (int8[5] Y) { Y = BitShift <direction = "LEFT"> (X, S) }
)", {{"X", tensor<int8_t>(DType::Int8, {5}, {64, 1, -64, -8, 4})}, {"S", tensor<int8_t>(DType::Int8, {5}, {1, 7, 1, -1, 9})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int8_t>(out->at("Y")), (std::vector<int8_t>{-128, -128, -128, 0, 0}));
}

TEST(BitShift, NarrowUnsignedLeftShiftKeepsTheLowBits) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 28]>
g (uint16[2] X, uint16[2] S) => (uint16[2] Y) { Y = BitShift <direction = "LEFT"> (X, S) }
)", {{"X", tensor<uint16_t>(DType::UInt16, {2}, {0xFFFF, 3})}, {"S", tensor<uint16_t>(DType::UInt16, {2}, {15, 16})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<uint16_t>(out->at("Y")), (std::vector<uint16_t>{0x8000, 0}));
}

TEST(BitShift, UnknownDirectionIsAnError) {
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 28]>
g (int8[1] X, int8[1] S) => (int8[1] Y) { Y = BitShift <direction = "UP"> (X, S) }
)", {{"X", tensor<int8_t>(DType::Int8, {1}, {1})}, {"S", tensor<int8_t>(DType::Int8, {1}, {1})}}), "direction");
}

// -- CumProd

std::string cum_prod(const std::string& attrs) {
  return R"(
<ir_version: 10, opset_import: ["" : 26]>
g (float[4] X, int64 A) => (float[4] Y) { Y = CumProd )" + attrs + R"( (X, A) }
)";
}

TEST(CumProd, RunningProductsHonourExclusiveAndReverse) {
  const TensorMap in{{"X", floats({4}, {1, 2, 3, 4})}, {"A", tensor<int64_t>(DType::Int64, {}, {0})}};
  const std::pair<std::string, std::vector<float>> cases[] = {
      {"", {1, 2, 6, 24}},
      {"<exclusive = 1>", {1, 1, 2, 6}},
      {"<reverse = 1>", {24, 24, 12, 4}},
      {"<exclusive = 1, reverse = 1>", {24, 12, 4, 1}},
  };
  for (const auto& [attrs, want] : cases) {
    auto out = run(cum_prod(attrs), in);
    ASSERT_TRUE(out.ok()) << attrs << ": " << out.error().message();
    EXPECT_EQ(values<float>(out->at("Y")), want) << attrs;
  }
}

TEST(CumProd, IntegerProductsWrapAndTheAxisInputChoosesTheDim) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 26]>
g (int32[2, 2] X, int64 A) => (int32[2, 2] Y) { Y = CumProd (X, A) }
)", {{"X", tensor<int32_t>(DType::Int32, {2, 2}, {65536, 65536, 3, -2})}, {"A", tensor<int64_t>(DType::Int64, {}, {-1})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int32_t>(out->at("Y")), (std::vector<int32_t>{65536, 0, 3, -6}));
}

TEST(CumProd, AxisOutOfRangeIsAnError) {
  expect_error(run(cum_prod(""), {{"X", floats({4}, {1, 2, 3, 4})}, {"A", tensor<int64_t>(DType::Int64, {}, {1})}}), "axis");
}

TEST(CumProd, AMissingAxisInputIsRefusedWhenTheModelIsRead) {
  // ONNX 1.12 has no schema for CumProd; its arity is stated in core's validation.
  auto m = parse_model_text(R"(
<ir_version: 10, opset_import: ["" : 26]>
g (float[4] X) => (float[4] Y) { Y = CumProd (X) }
)");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message().find("input 1 is required"), std::string::npos) << m.error().message();
}

// -- Mod

TEST(Mod, FloatFmodZeroTakesTheSignOfTheDivisor) {
  const float inf = INFINITY;
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 28]>
g (float[7] X, float[7] D) => (float[7] Y) { Y = Mod <fmod = 0> (X, D) }
)", {{"X", floats({7}, {-3, 3, -3, 0, -0.0f, 1, 5.5f})}, {"D", floats({7}, {2, -2, inf, -2, 2, 0, -2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  const auto y = values<float>(out->at("Y"));
  EXPECT_EQ(y[0], 1);
  EXPECT_EQ(y[1], -1);
  EXPECT_EQ(y[2], inf);  // -3 - floor(-3 / inf) * inf, as Python and NumPy give
  EXPECT_TRUE(y[3] == 0 && std::signbit(y[3]));
  EXPECT_TRUE(y[4] == 0 && !std::signbit(y[4]));
  EXPECT_TRUE(std::isnan(y[5]));
  EXPECT_EQ(y[6], -0.5f);
}

TEST(Mod, Float16FmodZeroRoundsOnce) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 28]>
g (float16[2] X, float16[2] D) => (float16[2] Y) { Y = Mod <fmod = 0> (X, D) }
)", {{"X", halves({2}, {-1, 7})}, {"D", halves({2}, {1024, -3})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(half_values(out->at("Y")), (std::vector<float>{1023, -2}));
}

TEST(Mod, FmodOtherThanZeroOrOneIsAnError) {
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 28]>
g (float[1] X, float[1] D) => (float[1] Y) { Y = Mod <fmod = 2> (X, D) }
)", {{"X", floats({1}, {1})}, {"D", floats({1}, {1})}}), "fmod");
}

}  // namespace
}  // namespace reduce
