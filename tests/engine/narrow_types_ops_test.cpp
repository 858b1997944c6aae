// Cast, CastLike, QuantizeLinear and DequantizeLinear on the narrow types in the reference interpreter,
// and the optimized engine running them. ONNX 1.12's text parser has no names for these types, so
// the one-node models are built in code.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/engine.h"
#include "engine/optimized.h"
#include "test_support.h"

namespace reduce {
namespace {

Attribute int_attr(const std::string& name, int64_t v) {
  Attribute a;
  a.name = name;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  return a;
}

Attribute string_attr(const std::string& name, const std::string& v) {
  Attribute a;
  a.name = name;
  a.kind = Attribute::Kind::String;
  a.s = v;
  return a;
}

// A one-node model of `op` (opset `opset`) reading the graph inputs `inputs` and writing Y.
Model one_node(const std::string& op, int64_t opset, const std::vector<std::pair<std::string, Tensor>>& inputs,
               std::vector<Attribute> attributes) {
  Model m;
  m.ir_version = 10;
  m.opset_imports.push_back({"", opset});
  Node n;
  n.name = "n0";
  n.op_type = op;
  for (const auto& [name, t] : inputs) {
    n.inputs.push_back(name);
    m.graph.inputs.push_back({name, ValueType::tensor(t.dtype(), t.shape()), {}});
  }
  n.outputs = {"Y"};
  n.attributes = std::move(attributes);
  m.graph.nodes.push_back(std::move(n));
  m.graph.outputs.push_back({"Y", {}, {}});
  return m;
}

Expected<Tensor> run_on(Engine& engine, const Model& m, const std::vector<std::pair<std::string, Tensor>>& inputs) {
  REDUCE_ASSIGN(auto prepared, engine.prepare(m));
  TensorMap feed;
  for (const auto& [name, t] : inputs) feed[name] = t;
  RunOptions options;
  options.outputs = {"Y"};
  REDUCE_ASSIGN(auto out, prepared->run(feed, options));
  return out.at("Y");
}

Expected<Tensor> run_ref(const Model& m, const std::vector<std::pair<std::string, Tensor>>& inputs) {
  return run_on(*make_reference_engine(), m, inputs);
}

Tensor floats(Shape shape, std::vector<float> v) { return Tensor::from_vector(DType::Float, std::move(shape), v).value(); }
Tensor bytes_of(DType t, Shape shape, std::vector<uint8_t> v) { return Tensor::from_vector(t, std::move(shape), v).value(); }

std::vector<uint8_t> stored(const Tensor& t) {
  auto d = t.data<uint8_t>();
  return {d.begin(), d.end()};
}

std::vector<double> decoded(const Tensor& t) {
  std::vector<double> out;
  for (uint64_t i = 0; i < t.elements(); ++i) out.push_back(t.element_as_double(i));
  return out;
}

Expected<Tensor> cast(const Tensor& x, DType to, int64_t saturate, int64_t opset = 21) {
  return run_ref(one_node("Cast", opset, {{"X", x}}, {int_attr("to", static_cast<int64_t>(to)), int_attr("saturate", saturate)}),
                 {{"X", x}});
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
    auto y = run_ref(one_node("Cast", 25, {{"X", x}},
                              {int_attr("to", static_cast<int64_t>(DType::Float8E8M0)), string_attr("round_mode", mode)}),
                     {{"X", x}});
    ASSERT_TRUE(y.ok()) << y.error().message();
    EXPECT_EQ(stored(*y), want) << mode;
  }
  auto bad = run_ref(one_node("Cast", 25, {{"X", x}},
                              {int_attr("to", static_cast<int64_t>(DType::Float8E8M0)), string_attr("round_mode", "sideways")}),
                     {{"X", x}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("round_mode"), std::string::npos) << bad.error().message();
}

TEST(NarrowTypeOps, CastLikeTakesSaturateToo) {
  const Tensor x = floats({1}, {1e6f});
  const Tensor like = bytes_of(DType::Float8E5M2, {1}, {0});
  auto y = run_ref(one_node("CastLike", 21, {{"X", x}, {"L", like}}, {int_attr("saturate", 0)}), {{"X", x}, {"L", like}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(stored(*y), std::vector<uint8_t>{0x7c});
}

TEST(NarrowTypeOps, QuantizeLinearBlockedInt4RoundsHalfToEvenAndSaturates) {
  // x [2,4], blocks of 2 along axis 1: scales [2,2], int4 zero points [2,2].
  const Tensor x = floats({2, 4}, {1.0f, 3.0f, -20.0f, 5.0f, 100.0f, -100.0f, 2.5f, 0.0f});
  const Tensor scale = floats({2, 2}, {2.0f, 1.0f, 1.0f, 1.0f});
  const Tensor zp = bytes_of(DType::Int4, {2, 2}, {1, 0, 0, static_cast<uint8_t>(-1)});
  auto y = run_ref(one_node("QuantizeLinear", 21, {{"X", x}, {"S", scale}, {"Z", zp}}, {int_attr("axis", 1), int_attr("block_size", 2)}),
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
  auto y = run_ref(one_node("DequantizeLinear", 21, {{"X", x}, {"S", scale}, {"Z", zp}}, {int_attr("axis", 0)}),
                   {{"X", x}, {"S", scale}, {"Z", zp}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(decoded(*y), (std::vector<double>{-4, 3.5, -0.5, 0, 2, 4}));
  const Tensor f8 = bytes_of(DType::Float8E4M3FN, {2}, {0x7e, 0xb8});
  const Tensor s = floats({}, {0.25f});
  auto z = run_ref(one_node("DequantizeLinear", 21, {{"X", f8}, {"S", s}}, {}), {{"X", f8}, {"S", s}});
  ASSERT_TRUE(z.ok()) << z.error().message();
  EXPECT_EQ(decoded(*z), (std::vector<double>{112, -0.25}));
}

TEST(NarrowTypeOps, QuantizeLinearToFloat8SaturatesUnlessToldNot) {
  const Tensor x = floats({2}, {1000.0f, 3.0f});
  const Tensor scale = floats({}, {1.0f});
  const Tensor zp = bytes_of(DType::Float8E4M3FN, {}, {0});
  for (auto [saturate, want] : {std::pair{1, std::vector<uint8_t>{0x7e, 0x44}}, std::pair{0, std::vector<uint8_t>{0x7f, 0x44}}}) {
    auto y = run_ref(one_node("QuantizeLinear", 21, {{"X", x}, {"S", scale}, {"Z", zp}}, {int_attr("saturate", saturate)}),
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
  auto in_float = run_ref(one_node("QuantizeLinear", 25, {{"X", x}, {"S", scale}}, {int_attr("output_dtype", static_cast<int64_t>(DType::UInt4))}),
                          {{"X", x}, {"S", scale}});
  ASSERT_TRUE(in_float.ok()) << in_float.error().message();
  EXPECT_EQ(in_float->dtype(), DType::UInt4);
  EXPECT_EQ(decoded(*in_float), std::vector<double>{3});
  auto in_half = run_ref(one_node("QuantizeLinear", 25, {{"X", x}, {"S", scale}},
                                  {int_attr("output_dtype", static_cast<int64_t>(DType::UInt4)),
                                   int_attr("precision", static_cast<int64_t>(DType::Float16))}),
                         {{"X", x}, {"S", scale}});
  ASSERT_TRUE(in_half.ok()) << in_half.error().message();
  EXPECT_EQ(decoded(*in_half), std::vector<double>{2});
  // output_dtype and a zero point of another type contradict each other.
  const Tensor zp = bytes_of(DType::UInt8, {}, {0});
  auto clash = run_ref(one_node("QuantizeLinear", 25, {{"X", x}, {"S", scale}, {"Z", zp}},
                                {int_attr("output_dtype", static_cast<int64_t>(DType::UInt4))}),
                       {{"X", x}, {"S", scale}, {"Z", zp}});
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.error().message().find("output_dtype"), std::string::npos) << clash.error().message();
}

TEST(NarrowTypeOps, TheOptimizedEngineRunsNarrowTypesAsTheReferenceDoes) {
  const Tensor x = floats({2, 4}, {1.0f, 3.0f, -20.0f, 5.0f, 100.0f, -100.0f, 2.5f, 0.0f});
  const Tensor scale = floats({2, 2}, {2.0f, 1.0f, 1.0f, 1.0f});
  const Tensor zp = bytes_of(DType::Int4, {2, 2}, {1, 0, 0, static_cast<uint8_t>(-1)});
  const Model m = one_node("QuantizeLinear", 21, {{"X", x}, {"S", scale}, {"Z", zp}}, {int_attr("axis", 1), int_attr("block_size", 2)});
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
