// Cast, CastLike, BitCast and Where (ops/tensor/): truncation, saturation and rounding, the narrow
// types, bool bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace op_test;

// A Cast of `x` to `to` with the given saturate, as a one-node model on the reference engine.
Expected<Tensor> cast(const Tensor& x, DType to, int64_t saturate, int64_t opset = 21) {
  return run_ref(node_model("Cast", opset, {{"X", x}}, {int_attr("to", static_cast<int64_t>(to)), int_attr("saturate", saturate)}),
                 {{"X", x}});
}

TEST(Elementwise, CastFromFloatToIntegerTruncatesAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = run_all(R"(
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
  auto out = run_all(R"(
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
  auto out = run_all(R"(
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

TEST(Elementwise, WhereSelectsFloat16ValuesExactly) {
  auto out = run_all(R"(
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
)", {{"X", tensor<uint8_t>(DType::UInt8, {1}, {2})}}), "bool");
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 26]>
g (float[1] X) => (string[1] Y) { Y = BitCast <to = 8> (X) }
)", {{"X", floats({1}, {1})}}), "to");
}

TEST(NarrowTypeOps, CastSaturatesOrOverflowsPerFloat8Type) {
  const Tensor x = floats({5}, {1e6f, -INFINITY, NAN, 465.0f, -0.0f});
  struct Case {
    DType t;
    std::vector<uint8_t> saturated, not_saturated;
  };
  const Case cases[] = {
      {DType::Float8E4M3FN, {0x7e, 0xfe, 0x7f, 0x7e, 0x80}, {0x7f, 0xff, 0x7f, 0x7f, 0x80}},
      {DType::Float8E4M3FNUZ, {0x7f, 0xff, 0x80, 0x7f, 0x00}, {0x80, 0x80, 0x80, 0x80, 0x00}},
      {DType::Float8E5M2, {0x7b, 0xfb, 0x7e, 0x5f, 0x80}, {0x7c, 0xfc, 0x7e, 0x5f, 0x80}},
      {DType::Float8E5M2FNUZ, {0x7f, 0xff, 0x80, 0x63, 0x00}, {0x80, 0x80, 0x80, 0x63, 0x00}},
  };
  for (const Case& c : cases) {
    auto sat = cast(x, c.t, 1);
    ASSERT_TRUE(sat.ok()) << sat.error().message();
    EXPECT_EQ(sat->dtype(), c.t);
    EXPECT_EQ(stored(*sat), c.saturated) << dtype_name(c.t);
    auto nosat = cast(x, c.t, 0);
    ASSERT_TRUE(nosat.ok()) << nosat.error().message();
    EXPECT_EQ(stored(*nosat), c.not_saturated) << dtype_name(c.t);
  }
}

TEST(NarrowTypeOps, CastFromFloat8GivesItsValuesInAnyType) {
  const Tensor x = bytes_of(DType::Float8E4M3FN, {3}, {0x7e, 0xb8, 0x7f});
  auto f = cast(x, DType::Float, 1);
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_EQ(f->data<float>()[0], 448.0f);
  EXPECT_EQ(f->data<float>()[1], -1.0f);
  EXPECT_TRUE(std::isnan(f->data<float>()[2]));
  auto i = cast(x, DType::Int32, 1);
  ASSERT_TRUE(i.ok()) << i.error().message();
  EXPECT_EQ(i->data<int32_t>()[0], 448);
  // float8 to float4: through the value, saturating.
  auto f4 = cast(x, DType::Float4E2M1, 1);
  ASSERT_TRUE(f4.ok()) << f4.error().message();
  EXPECT_EQ(stored(*f4), (std::vector<uint8_t>{0x7, 0xa, 0x8}));
}

TEST(NarrowTypeOps, CastToInt4WrapsAndFromInt4SignExtends) {
  auto y = cast(floats({4}, {9.0f, -9.0f, 7.9f, -2.5f}), DType::Int4, 1);
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(decoded(*y), (std::vector<double>{-7, 7, 7, -2}));
  auto back = cast(*y, DType::Int8, 1);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->data<int8_t>()[0], -7);
  auto u2 = cast(Tensor::from_vector(DType::Int64, {3}, std::vector<int64_t>{5, -1, 2}).value(), DType::UInt2, 1);
  ASSERT_TRUE(u2.ok()) << u2.error().message();
  EXPECT_EQ(stored(*u2), (std::vector<uint8_t>{1, 3, 2}));
}

TEST(NarrowTypeOps, CastToE8M0FollowsRoundModeFromOpset25) {
  const Tensor x = floats({3}, {3.0f, 0.3f, 1.0f});
  for (auto [mode, want] : {std::pair{"up", std::vector<uint8_t>{0x81, 0x7e, 0x7f}},
                            std::pair{"down", std::vector<uint8_t>{0x80, 0x7d, 0x7f}},
                            std::pair{"nearest", std::vector<uint8_t>{0x81, 0x7d, 0x7f}}}) {
    auto y = run_ref(node_model("Cast", 25, {{"X", x}},
                              {int_attr("to", static_cast<int64_t>(DType::Float8E8M0)), string_attr("round_mode", mode)}),
                     {{"X", x}});
    ASSERT_TRUE(y.ok()) << y.error().message();
    EXPECT_EQ(stored(*y), want) << mode;
  }
  auto bad = run_ref(node_model("Cast", 25, {{"X", x}},
                              {int_attr("to", static_cast<int64_t>(DType::Float8E8M0)), string_attr("round_mode", "sideways")}),
                     {{"X", x}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("round_mode"), std::string::npos) << bad.error().message();
}

TEST(NarrowTypeOps, CastLikeTakesSaturateToo) {
  const Tensor x = floats({1}, {1e6f});
  const Tensor like = bytes_of(DType::Float8E5M2, {1}, {0});
  auto y = run_ref(node_model("CastLike", 21, {{"X", x}, {"L", like}}, {int_attr("saturate", 0)}), {{"X", x}, {"L", like}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(stored(*y), std::vector<uint8_t>{0x7c});
}

}  // namespace
}  // namespace reduce
