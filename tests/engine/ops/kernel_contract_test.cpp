// What every kernel promises, checked across op families: attributes refused when preparing, sizes
// from data refused before allocating, omitted required inputs, shape mismatches, empty tensors,
// blocked products independent of the thread count.
#include <gtest/gtest.h>

#include <limits>

#include "core/validate.h"
#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace op_test;
using testing::parse_model;

TEST(Elementwise, BadAttributesAreRefusedWhenPreparing) {
  for (const char* node : {"C = BitShift <direction = \"UP\"> (A, A)", "C = Mod <fmod = 2> (A, A)",
                           "C = Cast <to = 8> (A)"}) {
    Model m = parse_model(std::string(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (uint8[1] A) => (uint8[1] C)
{
  )") + node + "\n}\n");
    auto prepared = make_reference_engine()->prepare(m);
    EXPECT_FALSE(prepared.ok()) << node;
  }
}

TEST(LinalgConv, ConvAndMatMulSplitIntoBlocksAreBitIdenticalForAnyThreadCount) {
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 8, 40, 40] X, float[160, 8, 3, 3] W, float[300, 70] A, float[70, 600] B) => (float[1, 160, 40, 40] Y, float[300, 600] Z)
{
  Y = Conv <pads = [1, 1, 1, 1]> (X, W)
  Z = MatMul (A, B)
}
)";
  TensorMap in{{"X", random_floats({1, 8, 40, 40}, 1)},
               {"W", random_floats({160, 8, 3, 3}, 2)},
               {"A", random_floats({300, 70}, 3)},
               {"B", random_floats({70, 600}, 4)}};
  auto one = run_all(model, in, 1);
  auto two = run_all(model, in, 2);
  ASSERT_TRUE(one.ok()) << one.error().message();
  ASSERT_TRUE(two.ok()) << two.error().message();
  EXPECT_TRUE(one->at("Y").equals(two->at("Y")));
  EXPECT_TRUE(one->at("Z").equals(two->at("Z")));
}

TEST(LinalgConv, BadAttributesAreRefusedWhenPreparing) {
  struct Case {
    const char* node;
    const char* attribute = nullptr;  // set to `bad` after loading, which refuses it (core/validate.h)
    std::vector<int64_t> bad = {};
  };
  for (const Case& c : {Case{"Y = Conv <auto_pad = \"SAME\"> (X, W)"}, Case{"Y = Conv <strides = [1, 1]> (X, W)", "strides", {0, 1}},
                        Case{"Y = Conv <group = 1> (X, W)", "group", {0}}, Case{"Y = Einsum <equation = \"i.j\"> (X, W)"}}) {
    Model m = parse_model(std::string(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 2, 4, 4] X, float[2, 2, 3, 3] W) => (float[1, 2, 2, 2] Y)
{
  )") + c.node + "\n}\n");
    for (Attribute& a : m.graph.nodes.at(0).attributes)
      if (c.attribute && a.name == c.attribute) {
        if (a.kind == Attribute::Kind::Ints) a.ints = c.bad;
        else a.i = c.bad.at(0);
      }
    auto prepared = make_reference_engine()->prepare(m);
    EXPECT_FALSE(prepared.ok()) << c.node << " " << (c.attribute ? c.attribute : "");
  }
}

TEST(LinalgConv, ShapeMismatchesAreErrors) {
  TensorMap in{{"X", random_floats({1, 4, 5, 5}, 12)}, {"W", random_floats({6, 3, 3, 3}, 13)}};
  EXPECT_NE(run_error(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 4, 5, 5] X, float[6, 3, 3, 3] W) => (float[1, 6, 3, 3] Y)
{
  Y = Conv <group = 2> (X, W)
}
)", in).find("does not match the channels"), std::string::npos);
  EXPECT_NE(run_error(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 4, 5, 5] X, float[6, 3, 3, 3] W) => (float[1, 6, 3, 3] Y)
{
  Y = MatMul (X, W)
}
)", in).find("inner dimensions differ"), std::string::npos);
  EXPECT_NE(run_error(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] A, float[3, 2] B, float[3] C) => (float[2, 2] Y)
{
  Y = Gemm (A, B, C)
}
)", {{"A", random_floats({2, 3}, 1)}, {"B", random_floats({3, 2}, 2)}, {"C", random_floats({3}, 3)}})
                .find("cannot be broadcast"), std::string::npos);
}

TEST(DataMovement, EmptyTensorsFlowThroughEveryOp) {
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[0, 3] X, int64[0] I, int64[4] P, int64[1] K, int64[2] R) => (float[3, 0] T, float[0, 6] C, float[2, 5] Q, float[0, 3] G, float[0, 0] S, float[0, 6] E, float[0] U, float[0, 0] V, int64[2, 0] N, float[0, 3] Y)
{
  T = Transpose(X)
  C = Concat<axis = 1>(X, X)
  Q = Pad(X, P)
  G = Gather<axis = 0>(X, I)
  S = Gather<axis = 1>(X, I)
  E = Tile(X, R)
  U = Unique(X)
  V, W = TopK(X, K)
  N = NonZero(X)
  Y = CumSum(X, K)
}
)",
                       {{"X", floats({0, 3}, {})},
                        {"I", int64s({0}, {})},
                        {"P", int64s({4}, {1, 1, 1, 1})},
                        {"K", int64s({1}, {0})},
                        {"R", int64s({2}, {5, 2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->at("T").shape(), (Shape{3, 0}));
  EXPECT_EQ(out->at("C").shape(), (Shape{0, 6}));
  EXPECT_EQ(values(out->at("Q")), std::vector<float>(10, 0.0f));
  EXPECT_EQ(out->at("S").shape(), (Shape{0, 0}));
  EXPECT_EQ(out->at("E").shape(), (Shape{0, 6}));
  EXPECT_EQ(out->at("U").shape(), (Shape{0}));
  EXPECT_EQ(out->at("V").shape(), (Shape{0, 0}));
  EXPECT_EQ(out->at("N").shape(), (Shape{2, 0}));
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
