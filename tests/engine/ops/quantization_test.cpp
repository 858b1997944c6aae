// QuantizeLinear, DequantizeLinear and the quantized products (ops/quantization/): the narrow types,
// rounding and saturation, zero points and scales, the optimized engine agreeing with the reference.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/optimized.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace op_test;

TEST(LinalgConv, QuantizedMatMulRejectsMisshapenZeroPoints) {
  auto u8 = [](Shape s, std::vector<uint8_t> v) { return tensor(DType::UInt8, std::move(s), v); };
  const std::string msg = run_error(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (uint8[2, 3] A, uint8[3, 2] B, uint8[3] AZ) => (int32[2, 2] Y)
{
  Y = MatMulInteger (A, B, AZ)
}
)", {{"A", u8({2, 3}, {1, 2, 3, 4, 5, 6})}, {"B", u8({3, 2}, {1, 2, 3, 4, 5, 6})}, {"AZ", u8({3}, {1, 1, 1})}});
  EXPECT_NE(msg.find("a_zero_point"), std::string::npos) << msg;
}

TEST(Quantization, PerAxisScaleMustMatchTheAxis) {
  auto y = run_one(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] X, float[2] S, uint8[2] Z) => (uint8[2, 3] Y) { Y = QuantizeLinear <axis = 1> (X, S, Z) }
)", {{"X", floats({2, 3}, {1, 2, 3, 4, 5, 6})}, {"S", floats({2}, {1, 2})},
     {"Z", Tensor::from_vector(DType::UInt8, {2}, std::vector<uint8_t>{0, 0}).value()}});
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.error().what.find("per-axis scale"), std::string::npos) << y.error().what;
}

TEST(Quantization, RoundsHalfToEvenAndSaturates) {
  auto y = run_one(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[5] X, float S, int8 Z) => (int8[5] Y) { Y = QuantizeLinear (X, S, Z) }
)", {{"X", floats({5}, {0.5f, 1.5f, 2.5f, -1000, 1000})}, {"S", floats({}, {1})},
     {"Z", Tensor::from_vector(DType::Int8, {}, std::vector<int8_t>{0}).value()}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(values<int8_t>(*y), (std::vector<int8_t>{0, 2, 2, -128, 127}));
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
  auto u8 = [](Shape s, std::vector<uint8_t> v) { return tensor(DType::UInt8, std::move(s), std::move(v)); };
  auto out = run(kQLinearMatMul, {{"A", u8({1, 2}, {2, 3})}, {"AS", halves({}, {0.5f})}, {"AZ", u8({}, {0})},
                                  {"B", u8({2, 1}, {4, 2})}, {"BS", halves({}, {0.25f})}, {"BZ", u8({}, {0})},
                                  {"YS", halves({}, {0.125f})}, {"YZ", u8({}, {10})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<uint8_t>(out->at("Y")), (std::vector<uint8_t>{24}));
}

TEST(QLinearMatMul, MixedScaleTypesAreAnError) {
  auto u8 = [](Shape s, std::vector<uint8_t> v) { return tensor(DType::UInt8, std::move(s), std::move(v)); };
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 21]>
g (uint8[1, 1] A, float16 AS, uint8 AZ, uint8[1, 1] B, float BS, uint8 BZ, float16 YS, uint8 YZ) => (uint8[1, 1] Y) {
  Y = QLinearMatMul (A, AS, AZ, B, BS, BZ, YS, YZ)
}
)", {{"A", u8({1, 1}, {1})}, {"AS", halves({}, {1})}, {"AZ", u8({}, {0})}, {"B", u8({1, 1}, {1})},
     {"BS", floats({}, {1})}, {"BZ", u8({}, {0})}, {"YS", halves({}, {1})}, {"YZ", u8({}, {0})}}), "scales");
}

TEST(NarrowTypeOps, QuantizeLinearBlockedInt4RoundsHalfToEvenAndSaturates) {
  // x [2,4], blocks of 2 along axis 1: scales [2,2], int4 zero points [2,2].
  const Tensor x = floats({2, 4}, {1.0f, 3.0f, -20.0f, 5.0f, 100.0f, -100.0f, 2.5f, 0.0f});
  const Tensor scale = floats({2, 2}, {2.0f, 1.0f, 1.0f, 1.0f});
  const Tensor zp = bytes_of(DType::Int4, {2, 2}, {1, 0, 0, static_cast<uint8_t>(-1)});
  auto y = run_ref(node_model("QuantizeLinear", 21, {{"X", x}, {"S", scale}, {"Z", zp}}, {int_attr("axis", 1), int_attr("block_size", 2)}),
                   {{"X", x}, {"S", scale}, {"Z", zp}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(y->dtype(), DType::Int4);
  // 1/2 = 0.5 -> 0 (+1); 3/2 = 1.5 -> 2 (+1); -20 -> -8; 5; 100 -> 7; -100 -> -8; 2.5 -> 2 (-1); 0 (-1).
  EXPECT_EQ(decoded(*y), (std::vector<double>{1, 3, -8, 5, 7, -8, 1, -1}));
}

TEST(NarrowTypeOps, DequantizeLinearPerAxisUInt4AndFloat8) {
  const Tensor x = bytes_of(DType::UInt4, {2, 3}, {0, 15, 7, 1, 2, 3});
  const Tensor scale = floats({2}, {0.5f, 2.0f});
  const Tensor zp = bytes_of(DType::UInt4, {2}, {8, 1});
  auto y = run_ref(node_model("DequantizeLinear", 21, {{"X", x}, {"S", scale}, {"Z", zp}}, {int_attr("axis", 0)}),
                   {{"X", x}, {"S", scale}, {"Z", zp}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(decoded(*y), (std::vector<double>{-4, 3.5, -0.5, 0, 2, 4}));
  const Tensor f8 = bytes_of(DType::Float8E4M3FN, {2}, {0x7e, 0xb8});
  const Tensor s = floats({}, {0.25f});
  auto z = run_ref(node_model("DequantizeLinear", 21, {{"X", f8}, {"S", s}}, {}), {{"X", f8}, {"S", s}});
  ASSERT_TRUE(z.ok()) << z.error().message();
  EXPECT_EQ(decoded(*z), (std::vector<double>{112, -0.25}));
}

TEST(NarrowTypeOps, QuantizeLinearToFloat8SaturatesUnlessToldNot) {
  const Tensor x = floats({2}, {1000.0f, 3.0f});
  const Tensor scale = floats({}, {1.0f});
  const Tensor zp = bytes_of(DType::Float8E4M3FN, {}, {0});
  for (auto [saturate, want] : {std::pair{1, std::vector<uint8_t>{0x7e, 0x44}}, std::pair{0, std::vector<uint8_t>{0x7f, 0x44}}}) {
    auto y = run_ref(node_model("QuantizeLinear", 21, {{"X", x}, {"S", scale}, {"Z", zp}}, {int_attr("saturate", saturate)}),
                     {{"X", x}, {"S", scale}, {"Z", zp}});
    ASSERT_TRUE(y.ok()) << y.error().message();
    EXPECT_EQ(stored(*y), want) << "saturate=" << saturate;
  }
}

TEST(NarrowTypeOps, QuantizeLinearOutputDtypeAndPrecision) {
  // 2.5 + 2^-10 lies halfway between two float16 values: divided in float16 it is 2.5, which rounds to
  // 2; in float it stays above 2.5 and rounds to 3.
  const Tensor x = floats({1}, {2.5f + 1.0f / 1024});
  const Tensor scale = floats({}, {1.0f});
  auto in_float = run_ref(node_model("QuantizeLinear", 25, {{"X", x}, {"S", scale}}, {int_attr("output_dtype", static_cast<int64_t>(DType::UInt4))}),
                          {{"X", x}, {"S", scale}});
  ASSERT_TRUE(in_float.ok()) << in_float.error().message();
  EXPECT_EQ(in_float->dtype(), DType::UInt4);
  EXPECT_EQ(decoded(*in_float), std::vector<double>{3});
  auto in_half = run_ref(node_model("QuantizeLinear", 25, {{"X", x}, {"S", scale}},
                                  {int_attr("output_dtype", static_cast<int64_t>(DType::UInt4)),
                                   int_attr("precision", static_cast<int64_t>(DType::Float16))}),
                         {{"X", x}, {"S", scale}});
  ASSERT_TRUE(in_half.ok()) << in_half.error().message();
  EXPECT_EQ(decoded(*in_half), std::vector<double>{2});
  // output_dtype and a zero point of another type contradict each other.
  const Tensor zp = bytes_of(DType::UInt8, {}, {0});
  auto clash = run_ref(node_model("QuantizeLinear", 25, {{"X", x}, {"S", scale}, {"Z", zp}},
                                {int_attr("output_dtype", static_cast<int64_t>(DType::UInt4))}),
                       {{"X", x}, {"S", scale}, {"Z", zp}});
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.error().message().find("output_dtype"), std::string::npos) << clash.error().message();
}

TEST(NarrowTypeOps, TheOptimizedEngineRunsNarrowTypesAsTheReferenceDoes) {
  const Tensor x = floats({2, 4}, {1.0f, 3.0f, -20.0f, 5.0f, 100.0f, -100.0f, 2.5f, 0.0f});
  const Tensor scale = floats({2, 2}, {2.0f, 1.0f, 1.0f, 1.0f});
  const Tensor zp = bytes_of(DType::Int4, {2, 2}, {1, 0, 0, static_cast<uint8_t>(-1)});
  const Model m = node_model("QuantizeLinear", 21, {{"X", x}, {"S", scale}, {"Z", zp}}, {int_attr("axis", 1), int_attr("block_size", 2)});
  auto ref = run_ref(m, {{"X", x}, {"S", scale}, {"Z", zp}});
  ASSERT_TRUE(ref.ok()) << ref.error().message();
  for (const char* spec : {"", "fp16"}) {
    auto engine = make_optimized_engine(parse_optimized_options(spec).value());
    auto opt = run_on(*engine, m, {{"X", x}, {"S", scale}, {"Z", zp}});
    ASSERT_TRUE(opt.ok()) << spec << ": " << opt.error().message();
    EXPECT_TRUE(opt->equals(*ref)) << spec;
  }
}

}  // namespace
}  // namespace reduce
