// MatMul, Gemm, Einsum and Det (ops/math/): blocked products against naive ones, integer wrapping,
// half sums, constant weights not kept as doubles.
#include <gtest/gtest.h>

#include "core/half.h"
#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace op_test;
using testing::heap_bytes_in_use;
using testing::parse_model;

TEST(LinalgConv, GemmWithTransposedOperandsSplitIntoBlocksMatchesANaiveProduct) {
  // 300 x 600 outputs: several row and column blocks, each reading its part of A^T and B^T.
  Tensor at = random_floats({70, 300}, 10), bt = random_floats({600, 70}, 11);
  auto out = run_all(R"(
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
  auto out = run_all(R"(
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
  auto out = run_all(R"(
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
  auto out = run_all(R"(
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
  auto out = run_all(R"(
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
  auto out = run_all(R"(
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

TEST(Det, ASingularMatrixHasDeterminantZeroAndPivotingFlipsTheSign) {
  auto y = run_one(R"(
<ir_version: 8, opset_import: ["" : 11]>
g (float[2, 2, 2] X) => (float[2] Y) { Y = Det (X) }
)", {{"X", floats({2, 2, 2}, {1, 2, 2, 4, 0, 1, 1, 0})}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(values<float>(*y), (std::vector<float>{0, -1}));
}

}  // namespace
}  // namespace reduce
