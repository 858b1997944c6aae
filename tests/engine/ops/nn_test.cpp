// Convolution, pooling, normalization and Dropout (ops/nn/): naive references, error paths, huge
// outputs refused, thread-count determinism.
#include <gtest/gtest.h>

#include <cmath>

#include "core/half.h"
#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace op_test;
using testing::parse_model;

// A naive double convolution, to check the blocked and depthwise paths on unusual geometry.
std::vector<double> naive_conv2d(const Tensor& x, const Tensor& w, size_t group, size_t stride, size_t dil,
                                 size_t pad_top, size_t pad_left, size_t oh, size_t ow) {
  const auto& xs = x.shape();
  const auto& ws = w.shape();
  const size_t C = xs[1], H = xs[2], W = xs[3], M = ws[0], cg = ws[1], KH = ws[2], KW = ws[3];
  std::vector<double> y(M * oh * ow, 0.0);
  for (size_t m = 0; m < M; ++m)
    for (size_t i = 0; i < oh; ++i)
      for (size_t j = 0; j < ow; ++j) {
        double acc = 0;
        for (size_t c = 0; c < cg; ++c)
          for (size_t kh = 0; kh < KH; ++kh)
            for (size_t kw = 0; kw < KW; ++kw) {
              const long ih = long(i * stride + kh * dil) - long(pad_top), iw = long(j * stride + kw * dil) - long(pad_left);
              if (ih < 0 || iw < 0 || ih >= long(H) || iw >= long(W)) continue;
              const size_t cin = (m / (M / group)) * cg + c;
              acc += double(x.data<float>()[(cin * H + ih) * W + iw]) * double(w.data<float>()[((m * cg + c) * KH + kh) * KW + kw]);
            }
        y[(m * oh + i) * ow + j] = acc;
      }
  (void)C;
  return y;
}

TEST(LinalgConv, DepthwiseAndGroupedConvMatchANaiveConvolution) {
  for (int group_case = 0; group_case < 2; ++group_case) {
    const bool depthwise = group_case == 0;
    const std::string w_shape = depthwise ? "[12, 1, 3, 5]" : "[12, 2, 3, 5]";
    const std::string model = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 12, 17, 301] X, float)" + w_shape + R"( W) => (float[1, 12, 8, 149] Y)
{
  Y = Conv <group = )" + (depthwise ? std::string("12") : std::string("6")) +
                              R"(, strides = [2, 2], dilations = [2, 2], pads = [2, 1, 1, 3]> (X, W)
}
)";
    Tensor x = random_floats({1, 12, 17, 301}, 5);
    Tensor w = random_floats({12, depthwise ? 1 : 2, 3, 5}, 6);
    auto out = run_all(model, {{"X", x}, {"W", w}});
    ASSERT_TRUE(out.ok()) << out.error().message();
    const Tensor& y = out->at("Y");
    ASSERT_EQ(y.shape(), (Shape{1, 12, 8, 149}));
    const auto expect = naive_conv2d(x, w, depthwise ? 12 : 6, 2, 2, 2, 1, 8, 149);
    for (size_t i = 0; i < expect.size(); ++i) ASSERT_NEAR(y.data<float>()[i], expect[i], 1e-5) << i;
  }
}

TEST(LinalgConv, AHugeOutputShapeIsRefusedNotAllocated) {
  const std::string msg = run_error(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 1, 2, 2] X, float[1, 1, 2, 2] W) => (float[1, 1, 1000000, 1000000] Y)
{
  Y = ConvTranspose <output_shape = [1000000, 1000000]> (X, W)
}
)", {{"X", random_floats({1, 1, 2, 2}, 1)}, {"W", random_floats({1, 1, 2, 2}, 2)}});
  EXPECT_NE(msg, std::string());
}

TEST(BatchNormalization, ResultsDoNotDependOnTheThreadCount) {
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[1, 64, 160, 160] X, float[64] S, float[64] B, float[64] M, float[64] V) => (float[1, 64, 160, 160] Y)
{ Y = BatchNormalization (X, S, B, M, V) }
)";
  Tensor var = normal_floats({64}, 7);
  for (auto& v : var.mutable_data<float>()) v = std::abs(v);
  TensorMap in{{"X", normal_floats({1, 64, 160, 160}, 3)}, {"S", normal_floats({64}, 4)}, {"B", normal_floats({64}, 5)},
               {"M", normal_floats({64}, 6)}, {"V", var}};
  auto one = run_one(model, in, "Y", 1);
  auto two = run_one(model, in, "Y", 2);
  ASSERT_TRUE(one.ok() && two.ok()) << (one.ok() ? two.error().message() : one.error().message());
  EXPECT_TRUE(one->equals(*two));
  // Spot check one element against the formula.
  const float x = in.at("X").data<float>()[160 * 160 * 5 + 7];
  const float expect = (x - in.at("M").data<float>()[5]) / std::sqrt(var.data<float>()[5] + 1e-5f) * in.at("S").data<float>()[5] +
                       in.at("B").data<float>()[5];
  EXPECT_NEAR(one->data<float>()[160 * 160 * 5 + 7], expect, 1e-4f * (1 + std::abs(expect)));
}

TEST(Dropout, TrainingWithANonZeroRatioIsRefusedAsRandom) {
  auto y = run_one(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4] X, float R, bool T) => (float[4] Y) { Y = Dropout <seed = 3> (X, R, T) }
)", {{"X", floats({4}, {1, 2, 3, 4})}, {"R", floats({}, {0.5f})},
     {"T", Tensor::from_vector(DType::Bool, {}, std::vector<uint8_t>{1}).value()}});
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.error().what.find("random"), std::string::npos) << y.error().what;
}

TEST(Dropout, BeforeOpset10TheMaskHasTheInputType) {
  auto y = run_one(R"(
<ir_version: 8, opset_import: ["" : 7]>
g (float[3] X) => (float[3] Y, float[3] Z) { Y, Z = Dropout (X) }
)", {{"X", floats({3}, {1, 2, 3})}}, "Z");
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(values<float>(*y), (std::vector<float>{1, 1, 1}));
}

// -- LpNormalization

TEST(LpNormalization, DividesByTheL2OrL1NormAlongTheAxis) {
  const TensorMap in{{"X", floats({2, 2}, {3, 6, 4, 8})}};
  auto l2 = run(R"(
<ir_version: 10, opset_import: ["" : 22]>
g (float[2, 2] X) => (float[2, 2] Y) { Y = LpNormalization <axis = 0> (X) }
)", in);
  ASSERT_TRUE(l2.ok()) << l2.error().message();
  expect_near(values<float>(l2->at("Y")), {0.6f, 0.6f, 0.8f, 0.8f}, 1e-6f);
  auto l1 = run(R"(
<ir_version: 10, opset_import: ["" : 1]>
g (float[2, 2] X) => (float[2, 2] Y) { Y = LpNormalization <p = 1> (X) }
)", in);
  ASSERT_TRUE(l1.ok()) << l1.error().message();
  expect_near(values<float>(l1->at("Y")), {1.0f / 3, 2.0f / 3, 1.0f / 3, 2.0f / 3}, 1e-6f);
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

// -- RMSNormalization

TEST(RMSNormalization, DividesByTheRootMeanSquareOfTheLastAxisAndScales) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 4] X, float[4] S) => (float[1, 4] Y) { Y = RMSNormalization <epsilon = 0.0> (X, S) }
)", {{"X", floats({1, 4}, {2, -2, 2, -2})}, {"S", floats({4}, {1, 2, 3, 4})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {1, -2, 3, -4});
}

TEST(RMSNormalization, AxisZeroNormalizesEverythingWithABroadcastScale) {
  // mean of squares (9 + 16 + 0 + 0) / 4 = 6.25, root 2.5; the scale [1, 10] broadcasts over rows.
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[2, 2] X, float[2] S) => (float[2, 2] Y) { Y = RMSNormalization <axis = 0, epsilon = 0.0> (X, S) }
)", {{"X", floats({2, 2}, {3, 4, 0, 0})}, {"S", floats({2}, {1, 10})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {1.2f, 16, 0, 0});
}

TEST(RMSNormalization, InvalidStashTypeOrAxisIsAnError) {
  const TensorMap in{{"X", floats({1, 2}, {1, 2})}, {"S", floats({2}, {1, 1})}};
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 2] X, float[2] S) => (float[1, 2] Y) { Y = RMSNormalization <stash_type = 7> (X, S) }
)", in), "stash_type");
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 2] X, float[2] S) => (float[1, 2] Y) { Y = RMSNormalization <axis = 2> (X, S) }
)", in), "axis");
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

TEST(Pooling, ParallelPoolsAreBitIdenticalForAnyThreadCount) {
  expect_same_for_one_and_two_threads(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 48, 64, 64] X) => (float[2, 48, 32, 32] A, float[2, 48, 33, 33] M, int64[2, 48, 33, 33] I, float[2, 48, 1, 1] G)
{
  A = AveragePool <kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]> (X)
  M, I = MaxPool <kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = 1> (X)
  G = GlobalAveragePool (X)
}
)", {{"X", random_floats({2, 48, 64, 64}, 1, -4, 4)}});
}

TEST(Pooling, LpPoolIsThePNormOfEachWindow) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1, 1, 4] X) => (float[1, 1, 1, 2] Y, float[1, 1, 1, 1] G)
{
  Y = LpPool <kernel_shape = [1, 2], strides = [1, 2], p = 2> (X)
  G = GlobalLpPool <p = 1> (X)
}
)");
  TensorMap out = run_ok(m, {{"X", floats({1, 1, 1, 4}, {3, -4, 6, 8})}});
  EXPECT_EQ(values(out.at("Y")), (std::vector<float>{5, 10}));
  EXPECT_EQ(values(out.at("G")), (std::vector<float>{21}));
}

TEST(Pooling, MaxPoolOnFloat16RoundsLikeFloat) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float16[1, 1, 2, 2] X) => (float16[1, 1, 1, 1] Y)
{
  Y = MaxPool <kernel_shape = [2, 2]> (X)
}
)");
  std::vector<uint16_t> h{float_to_half(1.5f), float_to_half(-2.0f), float_to_half(7.25f), float_to_half(0.0f)};
  TensorMap out = run_ok(m, {{"X", Tensor::from_vector(DType::Float16, {1, 1, 2, 2}, h).value()}});
  EXPECT_EQ(half_to_float(out.at("Y").data<uint16_t>()[0]), 7.25f);
}

TEST(Pooling, KernelLargerThanThePaddedInputIsAnError) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1, 2, 2] X) => (float[1, 1, 1, 1] Y)
{
  Y = AveragePool <kernel_shape = [3, 3]> (X)
}
)");
  EXPECT_NE(run_error(m, {{"X", floats({1, 1, 2, 2}, {1, 2, 3, 4})}}).find("larger than the padded input"), std::string::npos);
}

TEST(Pooling, PadsThatWouldNeedTerabytesOfOutputAreRefused) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 1, 1, 1] X) => (float[1, 1, ?, ?] Y)
{
  Y = MaxPool <kernel_shape = [1, 1], pads = [1073741824, 1073741824, 1073741824, 1073741824]> (X)
}
)");
  EXPECT_NE(run_error(m, {{"X", floats({1, 1, 1, 1}, {1})}}).find("[1,1,2147483649,2147483649]"), std::string::npos);
}

TEST(Pooling, MaxUnpoolRefusesAnIndexOutsideTheOutput) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 11]>
g (float[1, 1, 1, 1] X, int64[1, 1, 1, 1] I) => (float[1, 1, 2, 2] Y)
{
  Y = MaxUnpool <kernel_shape = [2, 2], strides = [2, 2]> (X, I)
}
)");
  auto idx = Tensor::from_vector<int64_t>(DType::Int64, {1, 1, 1, 1}, {4}).value();
  EXPECT_NE(run_error(m, {{"X", floats({1, 1, 1, 1}, {5})}, {"I", idx}}).find("out of range"), std::string::npos);
}

}  // namespace
}  // namespace reduce
