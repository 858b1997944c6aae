// Resize, Upsample, GridSample and AffineGrid (ops/tensor/): antialiasing, volumetric sampling,
// exact nearest copies, sizes refused.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace op_test;
using testing::parse_model;

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
  expect_near(values<float>(out->at("Y")), {3.5f, 4, 4}, 1e-6f);
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
  expect_near(values<float>(out->at("Y")), {2.5f, 9.5f}, 1e-6f);
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
  expect_near(values<float>(out->at("Y")), {0, 1, 3, 4}, 1e-6f);
}

// -- AffineGrid

TEST(AffineGrid, IdentityThetaGivesPixelCentresWithoutAlignCorners) {
  auto out = run(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[1, 2, 3] T, int64[4] S) => (float[1, 2, 2, 2] Y) { Y = AffineGrid (T, S) }
)", {{"T", floats({1, 2, 3}, {1, 0, 0, 0, 1, 0})}, {"S", int64s({4}, {1, 1, 2, 2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->at("Y").shape(), (Shape{1, 2, 2, 2}));
  expect_near(values(out->at("Y")), {-0.5f, -0.5f, 0.5f, -0.5f, -0.5f, 0.5f, 0.5f, 0.5f});
}

TEST(AffineGrid, AlignCornersMapsTheCornersAndThetaScalesAndShifts) {
  // x' = 2x + 1, y' = y on corner coordinates -1 and 1.
  auto out = run(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[1, 2, 3] T, int64[4] S) => (float[1, 2, 2, 2] Y) { Y = AffineGrid <align_corners = 1> (T, S) }
)", {{"T", floats({1, 2, 3}, {2, 0, 1, 0, 1, 0})}, {"S", int64s({4}, {1, 1, 2, 2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {-1, -1, 3, -1, -1, 1, 3, 1});
}

TEST(AffineGrid, ThreeDimensionalGridsListXThenYThenZ) {
  // Size D=2, H=1, W=1 with align_corners: a single pixel sits at -1, so only z varies (-1, 1);
  // theta swaps z and x.
  auto out = run(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[1, 3, 4] T, int64[5] S) => (float[1, 2, 1, 1, 3] Y) { Y = AffineGrid <align_corners = 1> (T, S) }
)", {{"T", floats({1, 3, 4}, {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0})}, {"S", int64s({5}, {1, 1, 2, 1, 1})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {-1, -1, -1, 1, -1, -1});
}

TEST(AffineGrid, ThetaNotMatchingSizeOrBadAlignCornersAreErrors) {
  expect_error(run(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[1, 3, 4] T, int64[4] S) => (float[1, 2, 2, 2] Y) { Y = AffineGrid (T, S) }
)", {{"T", random_floats({1, 3, 4}, 1)}, {"S", int64s({4}, {1, 1, 2, 2})}}), "theta");
  expect_error(run(R"(
<ir_version: 9, opset_import: ["" : 20]>
g (float[1, 2, 3] T, int64[4] S) => (float[1, 2, 2, 2] Y) { Y = AffineGrid <align_corners = 2> (T, S) }
)", {{"T", random_floats({1, 2, 3}, 1)}, {"S", int64s({4}, {1, 1, 2, 2})}}), "align_corners");
}

TEST(Resampling, ParallelResizeIsBitIdenticalForAnyThreadCount) {
  std::vector<float> s{1, 1, 2, 2};
  expect_same_for_one_and_two_threads(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 24, 40, 40] X, float[4] S) => (float[1, 24, 80, 80] N, float[1, 24, 80, 80] L, float[1, 24, 80, 80] C)
{
  N = Resize <mode = "nearest"> (X, , S)
  L = Resize <mode = "linear"> (X, , S)
  C = Resize <mode = "cubic"> (X, , S)
}
)", {{"X", random_floats({1, 24, 40, 40}, 2, -4, 4)}, {"S", floats({4}, s)}});
}

TEST(Resampling, ResizeScalesThatWouldNeedTerabytesAreRefused) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 1, 4, 4] X, float[4] S) => (float[1, 1, ?, ?] Y)
{
  Y = Resize (X, , S)
}
)");
  EXPECT_FALSE(run_error(m, {{"X", random_floats({1, 1, 4, 4}, 3, -4, 4)}, {"S", floats({4}, {1, 1, 1e6f, 1e6f})}}).empty());
}

TEST(Resampling, NearestResizeCopiesIntegerTypesExactly) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int64[1, 2] X, float[2] S) => (int64[2, 4] Y)
{
  Y = Resize <mode = "nearest"> (X, , S)
}
)");
  auto x = Tensor::from_vector<int64_t>(DType::Int64, {1, 2}, {int64_t{1} << 60, -7}).value();
  TensorMap out = run_ok(m, {{"X", x}, {"S", floats({2}, {2, 2})}});
  auto y = out.at("Y").data<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(y.begin(), y.end()),
            (std::vector<int64_t>{int64_t{1} << 60, int64_t{1} << 60, -7, -7, int64_t{1} << 60, int64_t{1} << 60, -7, -7}));
}

TEST(Resampling, UnknownCoordinateModeIsRefusedWhenPreparing) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 1, 4, 4] X, float[4] S) => (float[1, 1, 8, 8] Y)
{
  Y = Resize <coordinate_transformation_mode = "sideways"> (X, , S)
}
)");
  auto prepared = make_reference_engine(1)->prepare(m);
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.error().message().find("sideways"), std::string::npos);
}

}  // namespace
}  // namespace reduce
