// Shape and data-movement ops (ops/tensor/): older and newer opset forms, views, dtypes, errors on bad
// data, size bombs, thread-count independence.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/half.h"
#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace op_test;
using testing::parse_model;

TEST(DataMovement, ReshapeFlattenSqueezeAndUnsqueezeShareTheInputStorage) {
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 1, 3] X, int64[2] S) => (float[3, 2] R, float[2, 3] F, float[2, 3] Q, float[1, 2, 1, 3] U)
{
  R = Reshape(X, S)
  F = Flatten<axis = 1>(X)
  axis = Constant<value = int64[1] {1}>()
  Q = Squeeze(X, axis)
  zero = Constant<value = int64[1] {0}>()
  U = Unsqueeze(X, zero)
}
)",
                       {{"X", iota_floats({2, 1, 3})}, {"S", int64s({2}, {3, -1})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  const Tensor& x = out->at("R");
  EXPECT_EQ(x.shape(), (Shape{3, 2}));
  for (const char* name : {"F", "Q", "U"}) EXPECT_TRUE(out->at(name).shares_storage_with(x)) << name;
  EXPECT_EQ(out->at("U").shape(), (Shape{1, 2, 1, 3}));
  EXPECT_EQ(values(out->at("Q")), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(DataMovement, ReshapeRejectsShapesThatDoNotFit) {
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 14]>
g (float[2, 3] X, int64[2] S) => (float[6] Y) { Y = Reshape(X, S) }
)";
  EXPECT_TRUE(contains(run_error(model, {{"X", iota_floats({2, 3})}, {"S", int64s({2}, {4, -1})}}), "cannot reshape"));
  EXPECT_TRUE(contains(run_error(model, {{"X", iota_floats({2, 3})}, {"S", int64s({2}, {-1, -1})}}), "more than one -1"));
}

TEST(DataMovement, AxesAttributesOfOpset11AreHonoured) {
  auto out = run_all(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[1, 3, 1] X) => (float[3] Q, float[1, 1, 3, 1] U)
{
  Q = Squeeze<axes = [0, -1]>(X)
  U = Unsqueeze<axes = [-4]>(X)
}
)",
                       {{"X", iota_floats({1, 3, 1})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->at("Q").shape(), (Shape{3}));
  EXPECT_EQ(out->at("U").shape(), (Shape{1, 1, 3, 1}));
}

TEST(DataMovement, SqueezingADimThatIsNotOneIsAnError) {
  EXPECT_TRUE(contains(run_error(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[2, 3] X) => (float[3] Q) { Q = Squeeze<axes = [0]>(X) }
)",
                                 {{"X", iota_floats({2, 3})}}),
                       "cannot squeeze"));
}

TEST(DataMovement, TransposeMovesEveryDtypeAndIsIndependentOfThreadCount) {
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int8[2, 3] X) => (int8[3, 2] Y) { Y = Transpose<perm = [1, 0]>(X) }
)";
  auto out = run_all(model, {{"X", tensor<int8_t>(DType::Int8, {2, 3}, {1, 2, 3, -4, -5, -6})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int8_t>(out->at("Y")), (std::vector<int8_t>{1, -4, 2, -5, 3, -6}));

  // Large enough for tiled and parallel paths: every element must land where one thread puts it.
  const char* big = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[3, 120, 97, 41] X) => (float[41, 3, 97, 120] Y) { Y = Transpose<perm = [3, 0, 2, 1]>(X) }
)";
  const Tensor x = iota_floats({3, 120, 97, 41});
  auto one = run_all(big, {{"X", x}}, 1);
  auto two = run_all(big, {{"X", x}}, 2);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_TRUE(one->at("Y").equals(two->at("Y")));
  // Spot check against the definition Y[a,b,c,d] = X[b,d,c,a].
  auto y = one->at("Y").data<float>();
  const int64_t a = 40, b = 2, c = 96, d = 119;
  EXPECT_EQ(y[((a * 3 + b) * 97 + c) * 120 + d], static_cast<float>(((b * 120 + d) * 97 + c) * 41 + a));
}

TEST(DataMovement, TransposeRejectsAPermThatIsNotAPermutation) {
  EXPECT_TRUE(contains(run_error(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] X) => (float[3, 2] Y) { Y = Transpose<perm = [0, 0]>(X) }
)",
                                 {{"X", iota_floats({2, 3})}}),
                       "not a permutation"));
}

TEST(DataMovement, ConcatAndSplitAreIndependentOfThreadCount) {
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 120, 300, 8] A, float[1, 60, 300, 8] B) => (float[1, 180, 300, 8] C, float[1, 90, 300, 8] P, float[1, 90, 300, 8] Q)
{
  C = Concat<axis = 1>(A, B)
  P, Q = Split<axis = 1>(C)
}
)";
  const TensorMap in{{"A", iota_floats({1, 120, 300, 8})}, {"B", iota_floats({1, 60, 300, 8})}};
  auto one = run_all(model, in, 1);
  auto two = run_all(model, in, 2);
  ASSERT_TRUE(one.ok() && two.ok()) << (one.ok() ? two.error().what : one.error().what);
  for (const char* name : {"C", "P", "Q"}) EXPECT_TRUE(one->at(name).equals(two->at(name))) << name;
  EXPECT_EQ(one->at("Q").data<float>()[0], static_cast<float>(90 * 300 * 8));  // A's row 90
}

TEST(DataMovement, SplitSizesComeFromTheAttributeBeforeOpset13) {
  auto out = run_all(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[5] X) => (float[2] A, float[3] B) { A, B = Split<split = [2, 3]>(X) }
)",
                       {{"X", iota_floats({5})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("B")), (std::vector<float>{2, 3, 4}));
}

TEST(DataMovement, SplitNumOutputsOfOpset18LeavesASmallerLastChunk) {
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[7] X) => (float[3] A, float[3] B, float[1] C) { A, B, C = Split<num_outputs = 3>(X) }
)",
                       {{"X", iota_floats({7})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("C")), (std::vector<float>{6}));
}

TEST(DataMovement, SliceAttributesOfOpset9AndExtremeBoundsWithNegativeSteps) {
  auto old = run_all(R"(
<ir_version: 7, opset_import: ["" : 9]>
g (float[3, 4] X) => (float[2, 2] Y) { Y = Slice<starts = [1, -2], ends = [1000, 1000000], axes = [0, 1]>(X) }
)",
                       {{"X", iota_floats({3, 4})}});
  ASSERT_TRUE(old.ok()) << old.error().message();
  EXPECT_EQ(values(old->at("Y")), (std::vector<float>{6, 7, 10, 11}));

  auto rev = run_all(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[5] X, int64[1] S, int64[1] E, int64[1] A, int64[1] T) => (float[5] Y) { Y = Slice(X, S, E, A, T) }
)",
                       {{"X", iota_floats({5})},
                        {"S", int64s({1}, {INT64_MAX})},
                        {"E", int64s({1}, {INT64_MIN})},
                        {"A", int64s({1}, {-1})},
                        {"T", int64s({1}, {-2})}});
  ASSERT_TRUE(rev.ok()) << rev.error().message();
  EXPECT_EQ(values(rev->at("Y")), (std::vector<float>{4, 2, 0}));
}

TEST(DataMovement, SliceWithAZeroStepIsAnError) {
  EXPECT_TRUE(contains(run_error(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[5] X, int64[1] S, int64[1] E, int64[1] A, int64[1] T) => (float[5] Y) { Y = Slice(X, S, E, A, T) }
)",
                                 {{"X", iota_floats({5})},
                                  {"S", int64s({1}, {0})},
                                  {"E", int64s({1}, {5})},
                                  {"A", int64s({1}, {0})},
                                  {"T", int64s({1}, {0})}}),
                       "steps must not be 0"));
}

TEST(DataMovement, OutOfRangeIndicesAreErrorsNotReads) {
  const TensorMap in{{"X", iota_floats({2, 3})}, {"I", int64s({1, 1}, {3})}};
  EXPECT_TRUE(contains(run_error(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] X, int64[1, 1] I) => (float[2, 1] Y) { Y = Gather<axis = 1>(X, I) }
)",
                                 in),
                       "out of range"));
  EXPECT_TRUE(contains(run_error(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] X, int64[1, 1] I) => (float[1, 1] Y) { Y = GatherElements<axis = 1>(X, I) }
)",
                                 in),
                       "out of range"));
  EXPECT_TRUE(contains(run_error(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] X, int64[1, 1] I) => (float[1, 3] Y) { Y = GatherND(X, I) }
)",
                                 in),
                       "out of range"));
  EXPECT_TRUE(contains(run_error(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] X, int64[1, 1] I, float[1, 1] U) => (float[2, 3] Y) { Y = ScatterElements<axis = 1>(X, I, U) }
)",
                                 {{"X", iota_floats({2, 3})}, {"I", int64s({1, 1}, {-4})}, {"U", floats({1, 1}, {9})}}),
                       "out of range"));
  EXPECT_TRUE(contains(run_error(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] X, int64[1, 1] I, float[1, 3] U) => (float[2, 3] Y) { Y = ScatterND(X, I, U) }
)",
                                 {{"X", iota_floats({2, 3})}, {"I", int64s({1, 1}, {2})}, {"U", floats({1, 3}, {1, 2, 3})}}),
                       "out of range"));
}

TEST(DataMovement, ScatterReductionsMaxAndMinOfOpset18) {
  const TensorMap in{{"X", floats({1, 3}, {5, 5, 5})},
                     {"I", int64s({1, 4}, {0, 0, 2, 1})},
                     {"U", floats({1, 4}, {7, 3, 1, 6})}};
  auto mx = run_all(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 3] X, int64[1, 4] I, float[1, 4] U) => (float[1, 3] Y) { Y = ScatterElements<axis = 1, reduction = "max">(X, I, U) }
)",
                      in);
  ASSERT_TRUE(mx.ok()) << mx.error().message();
  EXPECT_EQ(values(mx->at("Y")), (std::vector<float>{7, 6, 5}));
  auto mn = run_all(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 3] X, int64[1, 4] I, float[1, 4] U) => (float[1, 3] Y) { Y = ScatterElements<axis = 1, reduction = "min">(X, I, U) }
)",
                      in);
  ASSERT_TRUE(mn.ok()) << mn.error().message();
  EXPECT_EQ(values(mn->at("Y")), (std::vector<float>{3, 5, 1}));
}

TEST(DataMovement, PadAttributeFormOfOpset2WithAValue) {
  auto out = run_all(R"(
<ir_version: 7, opset_import: ["" : 10]>
g (int32[2] X) => (int32[5] Y) { Y = Pad<pads = [1, 2], value = 7.0>(X) }
)",
                       {{"X", tensor<int32_t>(DType::Int32, {2}, {1, 2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int32_t>(out->at("Y")), (std::vector<int32_t>{7, 1, 2, 7, 7}));
}

TEST(DataMovement, PadWrapModeAndAxesInputOfOpset19) {
  auto out = run_all(R"(
<ir_version: 9, opset_import: ["" : 19]>
g (float[2, 3] X, int64[2] P, int64[1] A) => (float[2, 7] Y) { Y = Pad<mode = "wrap">(X, P, , A) }
)",
                       {{"X", iota_floats({2, 3})}, {"P", int64s({2}, {2, 2})}, {"A", int64s({1}, {-1})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("Y")), (std::vector<float>{1, 2, 0, 1, 2, 0, 1, 4, 5, 3, 4, 5, 3, 4}));
}

TEST(DataMovement, PadReflectAfterNegativePadsCrop) {
  // Crop one element from the front, then reflect two at the end: [1,2,3] -> [1,2,3,2,1].
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4] X, int64[2] P) => (float[5] Y) { Y = Pad<mode = "reflect">(X, P) }
)",
                       {{"X", floats({4}, {0, 1, 2, 3})}, {"P", int64s({2}, {-1, 2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("Y")), (std::vector<float>{1, 2, 3, 2, 1}));
}

// Each op whose output size comes from data must refuse a terabyte-sized request before allocating.
TEST(DataMovement, SizesFromDataBeyondTheTensorLimitAreRefused) {
  const int64_t huge = int64_t{1} << 40;
  struct Case {
    const char* model;
    TensorMap inputs;
  };
  const Case cases[] = {
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1] X, int64[2] S) => (float[1, 1] Y) { Y = Expand(X, S) })",
       {{"X", floats({1}, {1})}, {"S", int64s({2}, {huge, huge})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X, int64[1] R) => (float[2] Y) { Y = Tile(X, R) })",
       {{"X", floats({2}, {1, 2})}, {"R", int64s({1}, {huge})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X, int64[1] R) => (float[2] Y) { Y = Tile(X, R) })",
       {{"X", floats({2}, {1, 2})}, {"R", int64s({1}, {INT64_MAX})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (int64[2] S) => (float[1, 1] Y) { Y = ConstantOfShape(S) })",
       {{"S", int64s({2}, {huge, huge})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (float S, float L, float D) => (float[1] Y) { Y = Range(S, L, D) })",
       {{"S", floats({}, {0})}, {"L", floats({}, {1e30f})}, {"D", floats({}, {1})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (int64 S, int64 L, int64 D) => (int64[1] Y) { Y = Range(S, L, D) })",
       {{"S", int64s({}, {INT64_MIN})}, {"L", int64s({}, {INT64_MAX})}, {"D", int64s({}, {1})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X, int64[2] P) => (float[2] Y) { Y = Pad(X, P) })",
       {{"X", floats({2}, {1, 2})}, {"P", int64s({2}, {huge, huge})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X, int64[2] P) => (float[2] Y) { Y = Pad(X, P) })",
       {{"X", floats({2}, {1, 2})}, {"P", int64s({2}, {INT64_MAX, INT64_MAX})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (int64[2] I, int64 D, float[2] V) => (float[2, 1] Y) { Y = OneHot(I, D, V) })",
       {{"I", int64s({2}, {0, 1})}, {"D", int64s({}, {huge})}, {"V", floats({2}, {0, 1})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] X, int64[2] S) => (float[1, 1] Y) { Y = Reshape(X, S) })",
       {{"X", iota_floats({2, 3})}, {"S", int64s({2}, {huge, huge})}}},
  };
  for (const Case& c : cases) {
    const std::string error = run_error(c.model, c.inputs);
    EXPECT_FALSE(error.empty()) << c.model;
    EXPECT_TRUE(contains(error, "limit") || contains(error, "overflow") || contains(error, "invalid size") ||
                contains(error, "too many") || contains(error, "cannot reshape"))
        << c.model << "\n" << error;
  }
}

TEST(DataMovement, UniqueUnsortedKeepsFirstOccurrenceOrderWithAllFourOutputs) {
  auto out = run_all(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int64[6] X) => (int64[3] Y, int64[3] I, int64[6] V, int64[3] C) { Y, I, V, C = Unique<sorted = 0>(X) }
)",
                       {{"X", int64s({6}, {3, 1, 3, 2, 1, 3})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int64_t>(out->at("Y")), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ(values<int64_t>(out->at("I")), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(values<int64_t>(out->at("V")), (std::vector<int64_t>{0, 1, 0, 2, 1, 0}));
  EXPECT_EQ(values<int64_t>(out->at("C")), (std::vector<int64_t>{3, 2, 1}));
}

TEST(DataMovement, BadAttributesAreRejectedWhenTheModelIsPrepared) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 4, 2, 2] X) => (float[1, 1, 4, 4] Y) { Y = DepthToSpace<blocksize = 2, mode = "XYZ">(X) }
)");
  auto prepared = make_reference_engine(1)->prepare(m);
  ASSERT_FALSE(prepared.ok());
  EXPECT_TRUE(contains(prepared.error().what, "mode must be DCR or CRD"));
}

TEST(DataMovement, ExpandTileAndPadAreIndependentOfThreadCount) {
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 50, 1, 40] X, int64[4] S, int64[4] R, int64[8] P) => (float[8, 50, 30, 40] E, float[2, 100, 3, 80] T, float[3, 52, 5, 44] Q)
{
  E = Expand(X, S)
  T = Tile(X, R)
  Q = Pad<mode = "reflect">(X, P)
}
)";
  const TensorMap in{{"X", iota_floats({1, 50, 1, 40})},
                     {"S", int64s({4}, {8, 50, 30, 40})},
                     {"R", int64s({4}, {2, 2, 3, 2})},
                     {"P", int64s({8}, {1, 1, 2, 2, 1, 1, 2, 2})}};
  auto one = run_all(model, in, 1);
  auto two = run_all(model, in, 2);
  ASSERT_TRUE(one.ok() && two.ok()) << (one.ok() ? two.error().what : one.error().what);
  for (const char* name : {"E", "T", "Q"}) EXPECT_TRUE(one->at(name).equals(two->at(name))) << name;
}

// -- Range

TEST(Range, Float16AndBFloat16CountLikeFloat) {
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 21]>
g (float16 S, float16 L, float16 D) => (float16[N] Y) { Y = Range (S, L, D) }
)", {{"S", halves({}, {1})}, {"L", halves({}, {5})}, {"D", halves({}, {2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(half_values(out->at("Y")), (std::vector<float>{1, 3}));
  auto bf = [](float f) { return tensor<uint16_t>(DType::BFloat16, {}, {float_to_bfloat16(f)}); };
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

// -- CenterCropPad

TEST(CenterCropPad, PadsTheShortAxisAndCropsTheLongOneAroundTheCentre) {
  // Rows 2 -> 4: one zero row before, one after. Columns 5 -> 3: keep columns 1..3.
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 5] X, int64[2] S) => (float[4, 3] Y) { Y = CenterCropPad (X, S) }
)", {{"X", floats({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})}, {"S", int64s({2}, {4, 3})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->at("Y").shape(), (Shape{4, 3}));
  expect_near(values(out->at("Y")), {0, 0, 0, 1, 2, 3, 6, 7, 8, 0, 0, 0});
}

TEST(CenterCropPad, OddDifferencesPutTheSmallerHalfFirstOnTheChosenAxes) {
  // Only axis -1: 5 -> 2 crops from 1; the other axis keeps its size.
  auto out = run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 5] X, int64[1] S) => (float[1, 2] Y) { Y = CenterCropPad <axes = [-1]> (X, S) }
)", {{"X", floats({1, 5}, {0, 1, 2, 3, 4})}, {"S", int64s({1}, {2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {1, 2});
  // 2 -> 5 pads one before and two after.
  out = run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2] X, int64[1] S) => (float[5] Y) { Y = CenterCropPad (X, S) }
)", {{"X", floats({2}, {7, 8})}, {"S", int64s({1}, {5})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_near(values(out->at("Y")), {0, 7, 8, 0, 0});
}

TEST(CenterCropPad, RepeatedAxesOrAMismatchedShapeAreErrors) {
  const TensorMap in{{"X", floats({2, 2}, {1, 2, 3, 4})}, {"S", int64s({2}, {1, 1})}};
  expect_error(run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 2] X, int64[2] S) => (float[1, 1] Y) { Y = CenterCropPad <axes = [0, -2]> (X, S) }
)", in), "repeat");
  expect_error(run(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 2] X, int64[2] S) => (float[1, 1] Y) { Y = CenterCropPad <axes = [0]> (X, S) }
)", in), "shape");
}

}  // namespace
}  // namespace reduce
