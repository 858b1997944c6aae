// Matrix multiplication and convolution kernels: behaviour the ONNX conformance suite does not cover.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/half.h"
#include "engine/engine.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::heap_bytes_in_use;
using testing::parse_model;

template <typename T>
Tensor tensor(DType dtype, Shape shape, std::vector<T> v) {
  return Tensor::from_vector(dtype, std::move(shape), v).value();
}

Tensor random_floats(Shape shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(element_count(shape).value()));
  for (float& x : v) x = dist(rng);
  return tensor(DType::Float, std::move(shape), v);
}

Expected<TensorMap> run(const std::string& text, const TensorMap& inputs, int threads = 0) {
  Model m = parse_model(text);
  auto prepared = make_reference_engine(threads)->prepare(m);
  if (!prepared.ok()) return prepared.error();
  return (*prepared)->run(inputs);
}

std::string error_of(const std::string& text, const TensorMap& inputs) {
  auto out = run(text, inputs);
  return out.ok() ? std::string("(no error)") : out.error().what;
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
  auto one = run(model, in, 1);
  auto two = run(model, in, 2);
  ASSERT_TRUE(one.ok()) << one.error().message();
  ASSERT_TRUE(two.ok()) << two.error().message();
  EXPECT_TRUE(one->at("Y").equals(two->at("Y")));
  EXPECT_TRUE(one->at("Z").equals(two->at("Z")));
}

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
    auto out = run(model, {{"X", x}, {"W", w}});
    ASSERT_TRUE(out.ok()) << out.error().message();
    const Tensor& y = out->at("Y");
    ASSERT_EQ(y.shape(), (Shape{1, 12, 8, 149}));
    const auto expect = naive_conv2d(x, w, depthwise ? 12 : 6, 2, 2, 2, 1, 8, 149);
    for (size_t i = 0; i < expect.size(); ++i) ASSERT_NEAR(y.data<float>()[i], expect[i], 1e-5) << i;
  }
}

TEST(LinalgConv, GemmWithTransposedOperandsSplitIntoBlocksMatchesANaiveProduct) {
  // 300 x 600 outputs: several row and column blocks, each reading its part of A^T and B^T.
  Tensor at = random_floats({70, 300}, 10), bt = random_floats({600, 70}, 11);
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[70, 300] A, float[600, 70] B) => (float[300, 600] Y)
{
  Y = Gemm <transA = 1, transB = 1, alpha = 0.5> (A, B)
}
)", {{"A", at}, {"B", bt}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  const auto a = at.data<float>(), b = bt.data<float>(), y = out->at("Y").data<float>();
  for (size_t i = 0; i < 300; ++i)
    for (size_t j = 0; j < 600; ++j) {
      double sum = 0;
      for (size_t k = 0; k < 70; ++k) sum += double(a[k * 300 + i]) * double(b[j * 70 + k]);
      ASSERT_NEAR(y[i * 600 + j], 0.5 * sum, 1e-5) << i << "," << j;
    }
}

TEST(LinalgConv, ConstantWeightsAreNotKeptAsDoublesBetweenRuns) {
  // MatMul and Gemm (transB) over 4 MiB of float weights each. Kernels sum in double; they once
  // kept a double copy of each constant weight from run to run (16 MiB here, 2 GiB for 1 GiB of
  // weights). They now convert the block of weights each product reads.
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 256] X, float[256, 4096] W, float[4096, 256] V) => (float[1, 4096] Y, float[1, 4096] Z)
{
  Y = MatMul (X, W)
  Z = Gemm <transB = 1> (X, V)
}
)");
  m.graph.inputs.resize(1);
  m.graph.initializers.push_back({"W", random_floats({256, 4096}, 12), {}});
  m.graph.initializers.push_back({"V", random_floats({4096, 256}, 13), {}});
  auto prepared = make_reference_engine(1)->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  const TensorMap in{{"X", random_floats({1, 256}, 14)}};
  const size_t before = heap_bytes_in_use();
  for (int run = 0; run < 2; ++run) {
    auto out = (*prepared)->run(in);
    ASSERT_TRUE(out.ok()) << out.error().message();
  }
  const size_t after = heap_bytes_in_use();
  // What may stay: one thread's scratch blocks (256 x 256 doubles per kernel, 1 MiB in all).
  EXPECT_LT(after, before + (size_t{4} << 20)) << "heap grew by " << (after - before) << " bytes";
}

TEST(LinalgConv, MatMulOfIntegersWrapsLikeTheType) {
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int32[2] A, int32[2, 1] B) => (int32[1] Y)
{
  Y = MatMul (A, B)
}
)", {{"A", tensor<int32_t>(DType::Int32, {2}, {65536, 3})}, {"B", tensor<int32_t>(DType::Int32, {2, 1}, {65536, 5})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->at("Y").data<int32_t>()[0], 15);  // 2^32 wraps to 0
}

TEST(LinalgConv, MatMulBroadcastsBatchesAndPromotesVectors) {
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 1, 2, 3] A, float[3, 3, 2] B, float[3] V) => (float[2, 3, 2, 2] Y, float[2, 3, 2] Z)
{
  Y = MatMul (A, B)
  Z = MatMul (V, B)
}
)", {{"A", random_floats({2, 1, 2, 3}, 7)}, {"B", random_floats({3, 3, 2}, 8)}, {"V", random_floats({3}, 9)}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->at("Y").shape(), (Shape{2, 3, 2, 2}));
  EXPECT_EQ(out->at("Z").shape(), (Shape{3, 2}));
}

TEST(LinalgConv, Float16MatMulSumsWithoutIntermediateRounding) {
  // 2048 + 1 + 1 in half would round to 2048 twice; summed in double it is 2050.
  auto half = [](std::vector<float> v, Shape s) {
    std::vector<uint16_t> h;
    for (float f : v) h.push_back(float_to_half(f));
    return tensor(DType::Float16, std::move(s), h);
  };
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float16[1, 3] A, float16[3, 1] B) => (float16[1, 1] Y)
{
  Y = MatMul (A, B)
}
)", {{"A", half({2048, 1, 1}, {1, 3})}, {"B", half({1, 1, 1}, {3, 1})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(half_to_float(out->at("Y").data<uint16_t>()[0]), 2050.0f);
}

TEST(LinalgConv, GemmOnInt64AndDoubleConv) {
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int64[2, 2] A, int64[2, 2] B, int64[2] C, double[1, 1, 3] X, double[1, 1, 2] W) => (int64[2, 2] Y, double[1, 1, 2] Z)
{
  Y = Gemm <transB = 1> (A, B, C)
  Z = Conv (X, W)
}
)", {{"A", tensor<int64_t>(DType::Int64, {2, 2}, {1, 2, 3, 4})},
     {"B", tensor<int64_t>(DType::Int64, {2, 2}, {1, 0, 0, 1})},
     {"C", tensor<int64_t>(DType::Int64, {2}, {10, 20})},
     {"X", tensor<double>(DType::Double, {1, 1, 3}, {1, 2, 3})},
     {"W", tensor<double>(DType::Double, {1, 1, 2}, {0.5, 0.25})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  auto y = out->at("Y").data<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(y.begin(), y.end()), (std::vector<int64_t>{11, 22, 13, 24}));
  auto z = out->at("Z").data<double>();
  EXPECT_EQ(std::vector<double>(z.begin(), z.end()), (std::vector<double>{1.0, 1.75}));
}

TEST(LinalgConv, EinsumHandlesEllipsisDiagonalsAndImplicitOutput) {
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3, 3] A, float[3, 4] B) => (float[2] T, float[4, 2, 3] P)
{
  T = Einsum <equation = "...ii->..."> (A)
  P = Einsum <equation = "...ij,jk"> (A, B)
}
)", {{"A", random_floats({2, 3, 3}, 10)}, {"B", random_floats({3, 4}, 11)}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->at("T").shape(), (Shape{2}));
  EXPECT_EQ(out->at("P").shape(), (Shape{2, 3, 4}));  // implicit output: ellipsis first, then i, k
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
  EXPECT_NE(error_of(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 4, 5, 5] X, float[6, 3, 3, 3] W) => (float[1, 6, 3, 3] Y)
{
  Y = Conv <group = 2> (X, W)
}
)", in).find("does not match the channels"), std::string::npos);
  EXPECT_NE(error_of(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 4, 5, 5] X, float[6, 3, 3, 3] W) => (float[1, 6, 3, 3] Y)
{
  Y = MatMul (X, W)
}
)", in).find("inner dimensions differ"), std::string::npos);
  EXPECT_NE(error_of(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] A, float[3, 2] B, float[3] C) => (float[2, 2] Y)
{
  Y = Gemm (A, B, C)
}
)", {{"A", random_floats({2, 3}, 1)}, {"B", random_floats({3, 2}, 2)}, {"C", random_floats({3}, 3)}})
                .find("cannot be broadcast"), std::string::npos);
}

TEST(LinalgConv, AHugeOutputShapeIsRefusedNotAllocated) {
  const std::string msg = error_of(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 1, 2, 2] X, float[1, 1, 2, 2] W) => (float[1, 1, 1000000, 1000000] Y)
{
  Y = ConvTranspose <output_shape = [1000000, 1000000]> (X, W)
}
)", {{"X", random_floats({1, 1, 2, 2}, 1)}, {"W", random_floats({1, 1, 2, 2}, 2)}});
  EXPECT_NE(msg, "(no error)");
}

TEST(LinalgConv, QuantizedMatMulRejectsMisshapenZeroPoints) {
  auto u8 = [](Shape s, std::vector<uint8_t> v) { return tensor(DType::UInt8, std::move(s), v); };
  const std::string msg = error_of(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (uint8[2, 3] A, uint8[3, 2] B, uint8[3] AZ) => (int32[2, 2] Y)
{
  Y = MatMulInteger (A, B, AZ)
}
)", {{"A", u8({2, 3}, {1, 2, 3, 4, 5, 6})}, {"B", u8({3, 2}, {1, 2, 3, 4, 5, 6})}, {"AZ", u8({3}, {1, 1, 1})}});
  EXPECT_NE(msg.find("a_zero_point"), std::string::npos) << msg;
}

}  // namespace
}  // namespace reduce
