// Elementwise kernels of the reference engine: what the ONNX node tests do not cover (errors, wrapping and
// saturation, exact rounding, legacy broadcasting, determinism across thread counts).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/half.h"
#include "engine/engine.h"
#include "test_support.h"

namespace reduce {
namespace {

// Runs a one-graph text model on `inputs` with the given worker thread count.
Expected<TensorMap> run(const std::string& text, const TensorMap& inputs, int threads = 0) {
  Model m = testing::parse_model(text);
  auto prepared = make_reference_engine(threads)->prepare(m);
  if (!prepared) return prepared.error();
  return (*prepared)->run(inputs);
}

template <typename T>
Tensor tensor(DType dtype, Shape shape, std::vector<T> v) {
  return Tensor::from_vector(dtype, std::move(shape), v).value();
}

template <typename T>
std::vector<T> values(const Tensor& t) {
  auto d = t.data<T>();
  return {d.begin(), d.end()};
}

void expect_error(const Expected<TensorMap>& out, const std::string& part) {
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().what.find(part), std::string::npos) << out.error().what;
}

TEST(Elementwise, BroadcastingMixesScalarRowAndColumnOperands) {
  auto out = run(R"(
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
  auto out = run(model, {{"A", tensor<float>(DType::Float, {2, 3, 2}, std::vector<float>(12, 0))},
                         {"B", tensor<float>(DType::Float, {3}, {1, 2, 3})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<float>(out->at("C")), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
}

TEST(Elementwise, LegacyBinaryOpsWithoutBroadcastNeedEqualShapes) {
  auto out = run(R"(
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
  auto out = run(R"(
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
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64[2] A, int64[2] B) => (int64[2] C)
{
  C = Mod(A, B)
}
)", {{"A", tensor<int64_t>(DType::Int64, {2}, {5, 6})}, {"B", tensor<int64_t>(DType::Int64, {2}, {3, 0})}});
  expect_error(out, "modulo by zero");
}

TEST(Elementwise, FloatModuloNeedsFmod) {
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1] A, float[1] B) => (float[1] C)
{
  C = Mod(A, B)
}
)", {{"A", tensor<float>(DType::Float, {1}, {5})}, {"B", tensor<float>(DType::Float, {1}, {3})}});
  expect_error(out, "fmod must be 1");
}

TEST(Elementwise, BadAttributesAreRefusedWhenPreparing) {
  for (const char* node : {"C = BitShift <direction = \"UP\"> (A, A)", "C = Mod <fmod = 2> (A, A)",
                           "C = Cast <to = 8> (A)"}) {
    Model m = testing::parse_model(std::string(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (uint8[1] A) => (uint8[1] C)
{
  )") + node + "\n}\n");
    auto prepared = make_reference_engine()->prepare(m);
    EXPECT_FALSE(prepared.ok()) << node;
  }
}

TEST(Elementwise, ClipBoundsMustBeScalarsOfTheInputType) {
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[3] X, float[2] L) => (float[3] Y)
{
  Y = Clip(X, L)
}
)";
  auto out = run(model, {{"X", tensor<float>(DType::Float, {3}, {1, 2, 3})}, {"L", tensor<float>(DType::Float, {2}, {0, 1})}});
  expect_error(out, "bounds must be scalars");
}

TEST(Elementwise, ClipWithMinAboveMaxGivesMax) {
  auto out = run(R"(
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

TEST(Elementwise, CastFromFloatToIntegerTruncatesAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[6] X) => (int8[6] Y, uint8[6] U)
{
  Y = Cast <to = 3> (X)
  U = Cast <to = 2> (X)
}
)", {{"X", tensor<float>(DType::Float, {6}, {-2.7f, 2.7f, 300.0f, -300.0f, nan, 127.9f})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int8_t>(out->at("Y")), (std::vector<int8_t>{-2, 2, 127, -128, 0, 127}));
  EXPECT_EQ(values<uint8_t>(out->at("U")), (std::vector<uint8_t>{0, 2, 255, 0, 0, 127}));
}

TEST(Elementwise, CastFromDoubleToFloat16RoundsOnce) {
  // 1 + 2^-11 + 2^-40 lies just above the midpoint of two halves; rounding through float would land on
  // the midpoint and round to even (1.0); the correctly rounded half is the next one up.
  const double v = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (double[1] X) => (float16[1] Y)
{
  Y = Cast <to = 10> (X)
}
)", {{"X", tensor<double>(DType::Double, {1}, {v})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->at("Y").data<uint16_t>()[0], 0x3c01);
}

TEST(Elementwise, CastToBoolIsNonZeroAndBoolBytesOtherThanOneAreTrue) {
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[3] X, bool[3] B) => (bool[3] Y, int32[3] Z, bool[3] N)
{
  Y = Cast <to = 9> (X)
  Z = Cast <to = 6> (B)
  N = Not (B)
}
)", {{"X", tensor<float>(DType::Float, {3}, {0.0f, -0.5f, std::numeric_limits<float>::quiet_NaN()})},
     {"B", tensor<uint8_t>(DType::Bool, {3}, {0, 1, 7})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<uint8_t>(out->at("Y")), (std::vector<uint8_t>{0, 1, 1}));
  EXPECT_EQ(values<int32_t>(out->at("Z")), (std::vector<int32_t>{0, 1, 1}));
  EXPECT_EQ(values<uint8_t>(out->at("N")), (std::vector<uint8_t>{1, 0, 0}));
}

TEST(Elementwise, IntegerPowIsExactAndNegativeExponentsTruncate) {
  auto out = run(R"(
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
  auto out = run(R"(
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
  auto out = run(R"(
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

TEST(Elementwise, WhereSelectsFloat16ValuesExactly) {
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 16]>
g (bool[2,1] C, float16[2] X, float16[1] Y) => (float16[2,2] Z)
{
  Z = Where(C, X, Y)
}
)", {{"C", tensor<uint8_t>(DType::Bool, {2, 1}, {1, 0})},
     {"X", tensor<uint16_t>(DType::Float16, {2}, {0x3c01, 0x7e00})},
     {"Y", tensor<uint16_t>(DType::Float16, {1}, {0xfc00})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<uint16_t>(out->at("Z")), (std::vector<uint16_t>{0x3c01, 0x7e00, 0xfc00, 0xfc00}));
}

TEST(Elementwise, ShrinkAndSignWorkOnIntegers) {
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int8[4] X) => (int8[4] S, int8[4] G)
{
  S = Shrink <lambd = 1.5, bias = 1.0> (X)
  G = Sign (X)
}
)", {{"X", tensor<int8_t>(DType::Int8, {4}, {-128, -1, 0, 3})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int8_t>(out->at("S")), (std::vector<int8_t>{-127, 0, 0, 2}));
  EXPECT_EQ(values<int8_t>(out->at("G")), (std::vector<int8_t>{-1, -1, 0, 1}));
}

TEST(Elementwise, GeluAndMishFromNewerOpsets) {
  auto out = run(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[2] X) => (float[2] G, float[2] T, float[2] M)
{
  G = Gelu (X)
  T = Gelu <approximate = "tanh"> (X)
  M = Mish (X)
}
)", {{"X", tensor<float>(DType::Float, {2}, {1.0f, -2.0f})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  const auto g = values<float>(out->at("G"));
  const auto t = values<float>(out->at("T"));
  const auto m = values<float>(out->at("M"));
  EXPECT_NEAR(g[0], 0.8413447f, 1e-6);
  EXPECT_NEAR(g[1], -0.0455003f, 1e-6);
  EXPECT_NEAR(t[0], 0.8411920f, 1e-6);
  EXPECT_NEAR(m[0], 0.8650984f, 1e-6);
  EXPECT_NEAR(m[1], -0.2525015f, 1e-6);
}

TEST(Elementwise, MismatchedInputTypesAreAnError) {
  auto out = run(R"(
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
  auto one = run(model, in, 1);
  auto two = run(model, in, 2);
  ASSERT_TRUE(one.ok()) << one.error().message();
  ASSERT_TRUE(two.ok()) << two.error().message();
  EXPECT_TRUE(one->at("Y").equals(two->at("Y")));
  // Spot check one element against a direct computation.
  const size_t i = 5 * 160 * 160 + 3 * 160 + 7;  // channel 5, row 3 (mask true)
  const float a = x[i] + b[5];
  const float h = static_cast<float>(std::max(0.0, std::min(1.0, 0.3f * static_cast<double>(a / x[i]) + 0.5)));
  EXPECT_EQ(one->at("Y").data<float>()[i], h * b[5]);
}

}  // namespace
}  // namespace reduce
