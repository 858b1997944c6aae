// Operator versions and types closed after ONNX 1.23: BitShift on signed types, BitCast, CumProd, Mod
// fmod=0 on floats, half Range, QLinearMatMul with half scales, SpaceToDepth CRD, LpNormalization, Swish,
// SwiGLU, one-sided inverse DFT, volumetric GridSample, antialiased Resize. Hand-checked values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/half.h"
#include "core/model_io.h"
#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;
using op_test::expect_error;
using op_test::run;

template <typename T>
Tensor make(DType t, Shape shape, std::vector<T> v) {
  return Tensor::from_vector(t, std::move(shape), v).value();
}
Tensor floats(Shape shape, std::vector<float> v) { return make(DType::Float, std::move(shape), std::move(v)); }
Tensor halves(Shape shape, std::vector<float> v) {
  std::vector<uint16_t> h;
  for (float f : v) h.push_back(float_to_half(f));
  return make(DType::Float16, std::move(shape), std::move(h));
}

template <typename T>
std::vector<T> values(const Tensor& t) {
  auto d = t.data<T>();
  return {d.begin(), d.end()};
}
std::vector<float> half_values(const Tensor& t) {
  std::vector<float> v;
  for (uint16_t h : t.data<uint16_t>()) v.push_back(half_to_float(h));
  return v;
}


void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-6f) {
  op_test::expect_near(got, want, tol);
}

// A deterministic, irregular float pattern for determinism tests.
std::vector<float> pattern(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 3.0);
  return v;
}

// -- BitShift

const char* kShiftRight = R"(
<ir_version: 10, opset_import: ["" : 28]>
g (int8[6] X, int8[6] S) => (int8[6] Y) { Y = BitShift <direction = "RIGHT"> (X, S) }
)";

TEST(BitShift, SignedRightShiftIsArithmeticAndOutOfRangeShiftsLeaveOnlyTheSign) {
  auto out = run(kShiftRight, {{"X", make<int8_t>(DType::Int8, {6}, {-8, -1, -128, 4, -1, 4})},
                               {"S", make<int8_t>(DType::Int8, {6}, {1, 1, 1, 8, -1, 127})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int8_t>(out->at("Y")), (std::vector<int8_t>{-4, -1, -64, 0, -1, 0}));
}

TEST(BitShift, SignedLeftShiftWrapsAndOutOfRangeShiftsGiveZero) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 28]>
g (int8[5] X, int8[5] S) => (int8[5] Y) { Y = BitShift <direction = "LEFT"> (X, S) }
)", {{"X", make<int8_t>(DType::Int8, {5}, {64, 1, -64, -8, 4})}, {"S", make<int8_t>(DType::Int8, {5}, {1, 7, 1, -1, 9})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int8_t>(out->at("Y")), (std::vector<int8_t>{-128, -128, -128, 0, 0}));
}

TEST(BitShift, NarrowUnsignedLeftShiftKeepsTheLowBits) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 28]>
g (uint16[2] X, uint16[2] S) => (uint16[2] Y) { Y = BitShift <direction = "LEFT"> (X, S) }
)", {{"X", make<uint16_t>(DType::UInt16, {2}, {0xFFFF, 3})}, {"S", make<uint16_t>(DType::UInt16, {2}, {15, 16})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<uint16_t>(out->at("Y")), (std::vector<uint16_t>{0x8000, 0}));
}

TEST(BitShift, UnknownDirectionIsAnError) {
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 28]>
g (int8[1] X, int8[1] S) => (int8[1] Y) { Y = BitShift <direction = "UP"> (X, S) }
)", {{"X", make<int8_t>(DType::Int8, {1}, {1})}, {"S", make<int8_t>(DType::Int8, {1}, {1})}}), "direction");
}

// -- BitCast

TEST(BitCast, FloatToInt32KeepsTheBits) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 26]>
g (float[2] X) => (int32[2] Y) { Y = BitCast <to = 6> (X) }
)", {{"X", floats({2}, {1.0f, -2.0f})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->at("Y").dtype(), DType::Int32);
  EXPECT_EQ(values<int32_t>(out->at("Y")), (std::vector<int32_t>{0x3F800000, static_cast<int32_t>(0xC0000000u)}));
}

TEST(BitCast, BoolToUint8GivesZeroAndOne) {
  std::vector<uint8_t> bytes{1, 0, 1};
  auto x = Tensor::copy_of(DType::Bool, {3}, std::as_bytes(std::span(bytes))).value();
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 26]>
g (bool[3] X) => (uint8[3] Y) { Y = BitCast <to = 2> (X) }
)", {{"X", x}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<uint8_t>(out->at("Y")), (std::vector<uint8_t>{1, 0, 1}));
}

TEST(BitCast, DifferentWidthsOrInvalidBoolsOrUnknownTargetsAreErrors) {
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 26]>
g (float[1] X) => (int64[1] Y) { Y = BitCast <to = 7> (X) }
)", {{"X", floats({1}, {1})}}), "widths");
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 26]>
g (uint8[1] X) => (bool[1] Y) { Y = BitCast <to = 9> (X) }
)", {{"X", make<uint8_t>(DType::UInt8, {1}, {2})}}), "bool");
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 26]>
g (float[1] X) => (string[1] Y) { Y = BitCast <to = 8> (X) }
)", {{"X", floats({1}, {1})}}), "to");
}

// -- CumProd

std::string cum_prod(const std::string& attrs) {
  return R"(
<ir_version: 10, opset_import: ["" : 26]>
g (float[4] X, int64 A) => (float[4] Y) { Y = CumProd )" + attrs + R"( (X, A) }
)";
}

TEST(CumProd, RunningProductsHonourExclusiveAndReverse) {
  const TensorMap in{{"X", floats({4}, {1, 2, 3, 4})}, {"A", make<int64_t>(DType::Int64, {}, {0})}};
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
)", {{"X", make<int32_t>(DType::Int32, {2, 2}, {65536, 65536, 3, -2})}, {"A", make<int64_t>(DType::Int64, {}, {-1})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int32_t>(out->at("Y")), (std::vector<int32_t>{65536, 0, 3, -6}));
}

TEST(CumProd, AxisOutOfRangeIsAnError) {
  expect_error(run(cum_prod(""), {{"X", floats({4}, {1, 2, 3, 4})}, {"A", make<int64_t>(DType::Int64, {}, {1})}}), "axis");
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

// -- Range

TEST(Range, Float16AndBFloat16CountLikeFloat) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 21]>
g (float16 S, float16 L, float16 D) => (float16[N] Y) { Y = Range (S, L, D) }
)", {{"S", halves({}, {1})}, {"L", halves({}, {5})}, {"D", halves({}, {2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(half_values(out->at("Y")), (std::vector<float>{1, 3}));
  auto bf = [](float f) { return make<uint16_t>(DType::BFloat16, {}, {float_to_bfloat16(f)}); };
  out = run(R"(
<ir_version: 10, opset_import: ["" : 21]>
g (bfloat16 S, bfloat16 L, bfloat16 D) => (bfloat16[N] Y) { Y = Range (S, L, D) }
)", {{"S", bf(0)}, {"L", bf(-1)}, {"D", bf(-0.25f)}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  std::vector<float> got;
  for (uint16_t b : out->at("Y").data<uint16_t>()) got.push_back(bfloat16_to_float(b));
  EXPECT_EQ(got, (std::vector<float>{0, -0.25f, -0.5f, -0.75f}));
}

TEST(Range, ZeroDeltaIsAnError) {
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 21]>
g (float16 S, float16 L, float16 D) => (float16[N] Y) { Y = Range (S, L, D) }
)", {{"S", halves({}, {1})}, {"L", halves({}, {5})}, {"D", halves({}, {0})}}), "delta");
}

// -- QLinearMatMul

const char* kQLinearMatMul = R"(
<ir_version: 10, opset_import: ["" : 21]>
g (uint8[1, 2] A, float16 AS, uint8 AZ, uint8[2, 1] B, float16 BS, uint8 BZ, float16 YS, uint8 YZ) => (uint8[1, 1] Y) {
  Y = QLinearMatMul (A, AS, AZ, B, BS, BZ, YS, YZ)
}
)";

TEST(QLinearMatMul, Float16ScalesRequantizeLikeFloatScales) {
  // (2 * 4 + 3 * 2) * 0.5 * 0.25 / 0.125 = 14, plus the output zero point 10.
  auto u8 = [](Shape s, std::vector<uint8_t> v) { return make(DType::UInt8, std::move(s), std::move(v)); };
  auto out = run(kQLinearMatMul, {{"A", u8({1, 2}, {2, 3})}, {"AS", halves({}, {0.5f})}, {"AZ", u8({}, {0})},
                                  {"B", u8({2, 1}, {4, 2})}, {"BS", halves({}, {0.25f})}, {"BZ", u8({}, {0})},
                                  {"YS", halves({}, {0.125f})}, {"YZ", u8({}, {10})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<uint8_t>(out->at("Y")), (std::vector<uint8_t>{24}));
}

TEST(QLinearMatMul, MixedScaleTypesAreAnError) {
  auto u8 = [](Shape s, std::vector<uint8_t> v) { return make(DType::UInt8, std::move(s), std::move(v)); };
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 21]>
g (uint8[1, 1] A, float16 AS, uint8 AZ, uint8[1, 1] B, float BS, uint8 BZ, float16 YS, uint8 YZ) => (uint8[1, 1] Y) {
  Y = QLinearMatMul (A, AS, AZ, B, BS, BZ, YS, YZ)
}
)", {{"A", u8({1, 1}, {1})}, {"AS", halves({}, {1})}, {"AZ", u8({}, {0})}, {"B", u8({1, 1}, {1})},
     {"BS", floats({}, {1})}, {"BZ", u8({}, {0})}, {"YS", halves({}, {1})}, {"YZ", u8({}, {0})}}), "scales");
}

// -- SpaceToDepth

std::string space_to_depth(const std::string& mode) {
  return R"(
<ir_version: 10, opset_import: ["" : 28]>
g (float[1, 2, 2, 2] X) => (float[1, 8, 1, 1] Y) { Y = SpaceToDepth <blocksize = 2, mode = ")" + mode + R"("> (X) }
)";
}

TEST(SpaceToDepth, CrdModeKeepsEachChannelsBlockTogether) {
  const TensorMap in{{"X", floats({1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7})}};
  auto crd = run(space_to_depth("CRD"), in);
  ASSERT_TRUE(crd.ok()) << crd.error().message();
  EXPECT_EQ(values<float>(crd->at("Y")), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
  auto dcr = run(space_to_depth("DCR"), in);
  ASSERT_TRUE(dcr.ok()) << dcr.error().message();
  EXPECT_EQ(values<float>(dcr->at("Y")), (std::vector<float>{0, 4, 1, 5, 2, 6, 3, 7}));
}

TEST(SpaceToDepth, UnknownModeIsAnError) {
  expect_error(run(space_to_depth("RDC"), {{"X", floats({1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7})}}), "mode");
}

// -- LpNormalization

TEST(LpNormalization, DividesByTheL2OrL1NormAlongTheAxis) {
  const TensorMap in{{"X", floats({2, 2}, {3, 6, 4, 8})}};
  auto l2 = run(R"(
<ir_version: 10, opset_import: ["" : 22]>
g (float[2, 2] X) => (float[2, 2] Y) { Y = LpNormalization <axis = 0> (X) }
)", in);
  ASSERT_TRUE(l2.ok()) << l2.error().message();
  expect_near(values<float>(l2->at("Y")), {0.6f, 0.6f, 0.8f, 0.8f});
  auto l1 = run(R"(
<ir_version: 10, opset_import: ["" : 1]>
g (float[2, 2] X) => (float[2, 2] Y) { Y = LpNormalization <p = 1> (X) }
)", in);
  ASSERT_TRUE(l1.ok()) << l1.error().message();
  expect_near(values<float>(l1->at("Y")), {1.0f / 3, 2.0f / 3, 1.0f / 3, 2.0f / 3});
}

TEST(LpNormalization, AZeroVectorStaysZero) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 22]>
g (float[2, 2] X) => (float[2, 2] Y) { Y = LpNormalization (X) }
)", {{"X", floats({2, 2}, {0, 0, 0, 2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<float>(out->at("Y")), (std::vector<float>{0, 0, 0, 1}));
}

TEST(LpNormalization, POtherThanOneOrTwoIsAnError) {
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 22]>
g (float[2] X) => (float[2] Y) { Y = LpNormalization <p = 3> (X) }
)", {{"X", floats({2}, {1, 2})}}), "p must be");
}

TEST(LpNormalization, SameBitsForAnyThreadCount) {
  const char* model = R"(
<ir_version: 10, opset_import: ["" : 22]>
g (float[64, 300, 5] X) => (float[64, 300, 5] Y) { Y = LpNormalization <axis = 1> (X) }
)";
  const TensorMap in{{"X", floats({64, 300, 5}, pattern(64 * 300 * 5))}};
  auto one = run(model, in, {"Y"}, 1), four = run(model, in, {"Y"}, 4);
  ASSERT_TRUE(one.ok() && four.ok());
  EXPECT_TRUE(one->at("Y").equals(four->at("Y")));
}

// -- Swish and SwiGLU

TEST(Swish, MultipliesBySigmoidOfAlphaTimesX) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 24]>
g (float[3] X) => (float[3] Y) { Y = Swish <alpha = 0.5> (X) }
)", {{"X", floats({3}, {0, 2, -2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  // 2 / (1 + e^-1) and -2 / (1 + e).
  expect_near(values<float>(out->at("Y")), {0, 1.46211716f, -0.53788284f});
}

TEST(SwiGLU, GatesTheSecondInputWithSwishOfTheFirst) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 28]>
g (float[2] A, float[2] B) => (float[2] Y) { Y = SwiGLU (A, B) }
)", {{"A", floats({2}, {1, -2})}, {"B", floats({2}, {2, 3})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  // 2 / (1 + e^-1) and -6 / (1 + e^2).
  expect_near(values<float>(out->at("Y")), {1.46211716f, -0.71521753f});
}

TEST(SwiGLU, DifferentShapesAreAnError) {
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 28]>
g (float[2] A, float[1] B) => (float[2] Y) { Y = SwiGLU (A, B) }
)", {{"A", floats({2}, {1, 2})}, {"B", floats({1}, {1})}}), "same shape");
}

// -- DFT

TEST(DFT, OnesidedInverseRebuildsTheRealSignal) {
  // The one-sided spectrum of [1, 2, 3, 4]: 10, -2 + 2i, -2.
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 20]>
g (float[1, 3, 2] X) => (float[1, 4, 1] Y) { Y = DFT <inverse = 1, onesided = 1> (X) }
)", {{"X", floats({1, 3, 2}, {10, 0, -2, 2, -2, 0})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->at("Y").shape(), (Shape{1, 4, 1}));
  expect_near(values<float>(out->at("Y")), {1, 2, 3, 4}, 1e-6f);
}

TEST(DFT, OnesidedInverseOfARealInputIsAnError) {
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 20]>
g (float[1, 3, 1] X) => (float[1, 4, 1] Y) { Y = DFT <inverse = 1, onesided = 1> (X) }
)", {{"X", floats({1, 3, 1}, {1, 2, 3})}}), "complex");
}

// -- GridSample

const char* kGridSample3d = R"(
<ir_version: 10, opset_import: ["" : 20]>
g (float[1, 1, 2, 2, 2] X, float[1, 1, 1, 3, 3] G) => (float[1, 1, 1, 1, 3] Y) {
  Y = GridSample <mode = "MODE", align_corners = 1> (X, G)
}
)";

std::string grid_sample_3d(const std::string& mode) {
  std::string text = kGridSample3d;
  text.replace(text.find("MODE"), 4, mode);
  return text;
}

TEST(GridSample, VolumetricLinearAveragesTheEightCornersAtTheCentre) {
  // Points (x, y, z): the centre, the centre of the x = 1 face, and a corner.
  auto out = run(grid_sample_3d("linear"), {{"X", floats({1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7})},
                                            {"G", floats({1, 1, 1, 3, 3}, {0, 0, 0, 1, 0, 0, -1, -1, 1})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values<float>(out->at("Y")), {3.5f, 4, 4});
}

TEST(GridSample, VolumetricNearestReadsTheCornerVoxel) {
  auto out = run(grid_sample_3d("nearest"), {{"X", floats({1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7})},
                                             {"G", floats({1, 1, 1, 3, 3}, {1, -1, -1, -1, 1, -1, 1, 1, 1})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<float>(out->at("Y")), (std::vector<float>{1, 2, 7}));
}

TEST(GridSample, VolumetricCubicIsAnError) {
  expect_error(run(grid_sample_3d("cubic"), {{"X", floats({1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7})},
                                             {"G", floats({1, 1, 1, 3, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0})}}),
               "cubic");
}

TEST(GridSample, VolumetricSameBitsForAnyThreadCount) {
  const char* model = R"(
<ir_version: 10, opset_import: ["" : 20]>
g (float[2, 8, 5, 6, 7] X, float[2, 4, 5, 6, 3] G) => (float[2, 8, 4, 5, 6] Y) { Y = GridSample (X, G) }
)";
  std::vector<float> grid = pattern(2 * 4 * 5 * 6 * 3);
  for (float& g : grid) g /= 2.5f;
  const TensorMap in{{"X", floats({2, 8, 5, 6, 7}, pattern(2 * 8 * 5 * 6 * 7))}, {"G", floats({2, 4, 5, 6, 3}, grid)}};
  auto one = run(model, in, {"Y"}, 1), four = run(model, in, {"Y"}, 4);
  ASSERT_TRUE(one.ok() && four.ok());
  EXPECT_TRUE(one->at("Y").equals(four->at("Y")));
}

// -- Resize

std::string resize_antialias(const std::string& attrs) {
  return R"(
<ir_version: 10, opset_import: ["" : 19]>
g (float[4] X, float[1] S) => (float[2] Y) { Y = Resize <mode = "linear", antialias = 1)" + attrs + R"(> (X, , S) }
)";
}

TEST(Resize, LinearAntialiasWidensTheFilterWhenDownsampling) {
  // Output 0 samples x = 0.5 with tent weights 1/8, 3/8, 3/8, 1/8 over inputs -1 (edge: 0), 0, 1, 2.
  const TensorMap in{{"X", floats({4}, {0, 4, 8, 12})}, {"S", floats({1}, {0.5f})}};
  auto out = run(resize_antialias(""), in);
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values<float>(out->at("Y")), {2.5f, 9.5f});
  // exclude_outside drops the taps at -1 and at 4 and renormalizes: (4 * 3/4 + 8 * 1/4) / (7/4) and
  // (4 * 1/4 + 8 * 3/4 + 12 * 3/4) / (7/4).
  out = run(resize_antialias(", exclude_outside = 1"), in);
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values<float>(out->at("Y")), {20.0f / 7, 64.0f / 7}, 1e-5f);
}

TEST(Resize, AntialiasDoesNotChangeUpsampling) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 19]>
g (float[2] X, float[1] S) => (float[4] Y) { Y = Resize <mode = "linear", antialias = 1> (X, , S) }
)", {{"X", floats({2}, {0, 4})}, {"S", floats({1}, {2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values<float>(out->at("Y")), {0, 1, 3, 4});
}

}  // namespace
}  // namespace reduce
