// Activations (ops/activation/, and Sign of ops/math/): integer inputs and the newer opsets' Gelu, Mish,
// Swish and SwiGLU; what the ONNX node tests leave out.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace op_test;

TEST(Elementwise, ShrinkAndSignWorkOnIntegers) {
  auto out = run_all(R"(
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
  auto out = run_all(R"(
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

// -- Swish and SwiGLU

TEST(Swish, MultipliesBySigmoidOfAlphaTimesX) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 24]>
g (float[3] X) => (float[3] Y) { Y = Swish <alpha = 0.5> (X) }
)", {{"X", floats({3}, {0, 2, -2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  // 2 / (1 + e^-1) and -2 / (1 + e).
  expect_near(values<float>(out->at("Y")), {0, 1.46211716f, -0.53788284f}, 1e-6f);
}

TEST(SwiGLU, GatesTheSecondInputWithSwishOfTheFirst) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 28]>
g (float[2] A, float[2] B) => (float[2] Y) { Y = SwiGLU (A, B) }
)", {{"A", floats({2}, {1, -2})}, {"B", floats({2}, {2, 3})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  // 2 / (1 + e^-1) and -6 / (1 + e^2).
  expect_near(values<float>(out->at("Y")), {1.46211716f, -0.71521753f}, 1e-6f);
}

TEST(SwiGLU, DifferentShapesAreAnError) {
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 28]>
g (float[2] A, float[1] B) => (float[2] Y) { Y = SwiGLU (A, B) }
)", {{"A", floats({2}, {1, 2})}, {"B", floats({1}, {1})}}), "same shape");
}

}  // namespace
}  // namespace reduce
