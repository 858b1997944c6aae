// Data-movement operators of the reference engine: what the ONNX node tests do not cover (older and newer
// opset forms, views, dtypes, errors on bad data, size bombs, thread-count independence).
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>

#include "core/half.h"
#include "engine/engine.h"
#include "test_support.h"

namespace reduce {
namespace {

Expected<TensorMap> run_model(const std::string& text, const TensorMap& inputs, int threads = 1) {
  Model m = testing::parse_model(text);
  REDUCE_ASSIGN(auto prepared, make_reference_engine(threads)->prepare(m));
  return prepared->run(inputs);
}

template <typename T>
Tensor tensor(DType dtype, Shape shape, std::vector<T> v) {
  return Tensor::from_vector(dtype, std::move(shape), v).value();
}
Tensor floats(Shape shape, std::vector<float> v) { return tensor(DType::Float, std::move(shape), std::move(v)); }
Tensor ints(Shape shape, std::vector<int64_t> v) { return tensor(DType::Int64, std::move(shape), std::move(v)); }
Tensor iota_floats(Shape shape) {
  std::vector<float> v(element_count(shape).value());
  std::iota(v.begin(), v.end(), 0.0f);
  return floats(std::move(shape), v);
}

template <typename T = float>
std::vector<T> values(const Tensor& t) {
  auto d = t.data<T>();
  return {d.begin(), d.end()};
}

// The error message of a run expected to fail (empty when it unexpectedly succeeds).
std::string run_error(const std::string& text, const TensorMap& inputs) {
  auto out = run_model(text, inputs);
  return out.ok() ? std::string() : out.error().what;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(DataMovement, ReshapeFlattenSqueezeAndUnsqueezeShareTheInputStorage) {
  auto out = run_model(R"(
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
                       {{"X", iota_floats({2, 1, 3})}, {"S", ints({2}, {3, -1})}});
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
  EXPECT_TRUE(contains(run_error(model, {{"X", iota_floats({2, 3})}, {"S", ints({2}, {4, -1})}}), "cannot reshape"));
  EXPECT_TRUE(contains(run_error(model, {{"X", iota_floats({2, 3})}, {"S", ints({2}, {-1, -1})}}), "more than one -1"));
}

TEST(DataMovement, AxesAttributesOfOpset11AreHonoured) {
  auto out = run_model(R"(
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
  auto out = run_model(model, {{"X", tensor<int8_t>(DType::Int8, {2, 3}, {1, 2, 3, -4, -5, -6})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int8_t>(out->at("Y")), (std::vector<int8_t>{1, -4, 2, -5, 3, -6}));

  // Large enough for tiled and parallel paths: every element must land where one thread puts it.
  const char* big = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[3, 120, 97, 41] X) => (float[41, 3, 97, 120] Y) { Y = Transpose<perm = [3, 0, 2, 1]>(X) }
)";
  const Tensor x = iota_floats({3, 120, 97, 41});
  auto one = run_model(big, {{"X", x}}, 1);
  auto two = run_model(big, {{"X", x}}, 2);
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
  auto one = run_model(model, in, 1);
  auto two = run_model(model, in, 2);
  ASSERT_TRUE(one.ok() && two.ok()) << (one.ok() ? two.error().what : one.error().what);
  for (const char* name : {"C", "P", "Q"}) EXPECT_TRUE(one->at(name).equals(two->at(name))) << name;
  EXPECT_EQ(one->at("Q").data<float>()[0], static_cast<float>(90 * 300 * 8));  // A's row 90
}

TEST(DataMovement, SplitSizesComeFromTheAttributeBeforeOpset13) {
  auto out = run_model(R"(
<ir_version: 7, opset_import: ["" : 11]>
g (float[5] X) => (float[2] A, float[3] B) { A, B = Split<split = [2, 3]>(X) }
)",
                       {{"X", iota_floats({5})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("B")), (std::vector<float>{2, 3, 4}));
}

TEST(DataMovement, SplitNumOutputsOfOpset18LeavesASmallerLastChunk) {
  auto out = run_model(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[7] X) => (float[3] A, float[3] B, float[1] C) { A, B, C = Split<num_outputs = 3>(X) }
)",
                       {{"X", iota_floats({7})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("C")), (std::vector<float>{6}));
}

TEST(DataMovement, SliceAttributesOfOpset9AndExtremeBoundsWithNegativeSteps) {
  auto old = run_model(R"(
<ir_version: 7, opset_import: ["" : 9]>
g (float[3, 4] X) => (float[2, 2] Y) { Y = Slice<starts = [1, -2], ends = [1000, 1000000], axes = [0, 1]>(X) }
)",
                       {{"X", iota_floats({3, 4})}});
  ASSERT_TRUE(old.ok()) << old.error().message();
  EXPECT_EQ(values(old->at("Y")), (std::vector<float>{6, 7, 10, 11}));

  auto rev = run_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[5] X, int64[1] S, int64[1] E, int64[1] A, int64[1] T) => (float[5] Y) { Y = Slice(X, S, E, A, T) }
)",
                       {{"X", iota_floats({5})},
                        {"S", ints({1}, {INT64_MAX})},
                        {"E", ints({1}, {INT64_MIN})},
                        {"A", ints({1}, {-1})},
                        {"T", ints({1}, {-2})}});
  ASSERT_TRUE(rev.ok()) << rev.error().message();
  EXPECT_EQ(values(rev->at("Y")), (std::vector<float>{4, 2, 0}));
}

TEST(DataMovement, SliceWithAZeroStepIsAnError) {
  EXPECT_TRUE(contains(run_error(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[5] X, int64[1] S, int64[1] E, int64[1] A, int64[1] T) => (float[5] Y) { Y = Slice(X, S, E, A, T) }
)",
                                 {{"X", iota_floats({5})},
                                  {"S", ints({1}, {0})},
                                  {"E", ints({1}, {5})},
                                  {"A", ints({1}, {0})},
                                  {"T", ints({1}, {0})}}),
                       "steps must not be 0"));
}

TEST(DataMovement, OutOfRangeIndicesAreErrorsNotReads) {
  const TensorMap in{{"X", iota_floats({2, 3})}, {"I", ints({1, 1}, {3})}};
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
                                 {{"X", iota_floats({2, 3})}, {"I", ints({1, 1}, {-4})}, {"U", floats({1, 1}, {9})}}),
                       "out of range"));
  EXPECT_TRUE(contains(run_error(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] X, int64[1, 1] I, float[1, 3] U) => (float[2, 3] Y) { Y = ScatterND(X, I, U) }
)",
                                 {{"X", iota_floats({2, 3})}, {"I", ints({1, 1}, {2})}, {"U", floats({1, 3}, {1, 2, 3})}}),
                       "out of range"));
}

TEST(DataMovement, ScatterReductionsMaxAndMinOfOpset18) {
  const TensorMap in{{"X", floats({1, 3}, {5, 5, 5})},
                     {"I", ints({1, 4}, {0, 0, 2, 1})},
                     {"U", floats({1, 4}, {7, 3, 1, 6})}};
  auto mx = run_model(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 3] X, int64[1, 4] I, float[1, 4] U) => (float[1, 3] Y) { Y = ScatterElements<axis = 1, reduction = "max">(X, I, U) }
)",
                      in);
  ASSERT_TRUE(mx.ok()) << mx.error().message();
  EXPECT_EQ(values(mx->at("Y")), (std::vector<float>{7, 6, 5}));
  auto mn = run_model(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 3] X, int64[1, 4] I, float[1, 4] U) => (float[1, 3] Y) { Y = ScatterElements<axis = 1, reduction = "min">(X, I, U) }
)",
                      in);
  ASSERT_TRUE(mn.ok()) << mn.error().message();
  EXPECT_EQ(values(mn->at("Y")), (std::vector<float>{3, 5, 1}));
}

TEST(DataMovement, PadAttributeFormOfOpset2WithAValue) {
  auto out = run_model(R"(
<ir_version: 7, opset_import: ["" : 10]>
g (int32[2] X) => (int32[5] Y) { Y = Pad<pads = [1, 2], value = 7.0>(X) }
)",
                       {{"X", tensor<int32_t>(DType::Int32, {2}, {1, 2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int32_t>(out->at("Y")), (std::vector<int32_t>{7, 1, 2, 7, 7}));
}

TEST(DataMovement, PadWrapModeAndAxesInputOfOpset19) {
  auto out = run_model(R"(
<ir_version: 9, opset_import: ["" : 19]>
g (float[2, 3] X, int64[2] P, int64[1] A) => (float[2, 7] Y) { Y = Pad<mode = "wrap">(X, P, , A) }
)",
                       {{"X", iota_floats({2, 3})}, {"P", ints({2}, {2, 2})}, {"A", ints({1}, {-1})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("Y")), (std::vector<float>{1, 2, 0, 1, 2, 0, 1, 4, 5, 3, 4, 5, 3, 4}));
}

TEST(DataMovement, PadReflectAfterNegativePadsCrop) {
  // Crop one element from the front, then reflect two at the end: [1,2,3] -> [1,2,3,2,1].
  auto out = run_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4] X, int64[2] P) => (float[5] Y) { Y = Pad<mode = "reflect">(X, P) }
)",
                       {{"X", floats({4}, {0, 1, 2, 3})}, {"P", ints({2}, {-1, 2})}});
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
       {{"X", floats({1}, {1})}, {"S", ints({2}, {huge, huge})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X, int64[1] R) => (float[2] Y) { Y = Tile(X, R) })",
       {{"X", floats({2}, {1, 2})}, {"R", ints({1}, {huge})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X, int64[1] R) => (float[2] Y) { Y = Tile(X, R) })",
       {{"X", floats({2}, {1, 2})}, {"R", ints({1}, {INT64_MAX})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (int64[2] S) => (float[1, 1] Y) { Y = ConstantOfShape(S) })",
       {{"S", ints({2}, {huge, huge})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (float S, float L, float D) => (float[1] Y) { Y = Range(S, L, D) })",
       {{"S", floats({}, {0})}, {"L", floats({}, {1e30f})}, {"D", floats({}, {1})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (int64 S, int64 L, int64 D) => (int64[1] Y) { Y = Range(S, L, D) })",
       {{"S", ints({}, {INT64_MIN})}, {"L", ints({}, {INT64_MAX})}, {"D", ints({}, {1})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X, int64[2] P) => (float[2] Y) { Y = Pad(X, P) })",
       {{"X", floats({2}, {1, 2})}, {"P", ints({2}, {huge, huge})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X, int64[2] P) => (float[2] Y) { Y = Pad(X, P) })",
       {{"X", floats({2}, {1, 2})}, {"P", ints({2}, {INT64_MAX, INT64_MAX})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (int64[2] I, int64 D, float[2] V) => (float[2, 1] Y) { Y = OneHot(I, D, V) })",
       {{"I", ints({2}, {0, 1})}, {"D", ints({}, {huge})}, {"V", floats({2}, {0, 1})}}},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] X, int64[2] S) => (float[1, 1] Y) { Y = Reshape(X, S) })",
       {{"X", iota_floats({2, 3})}, {"S", ints({2}, {huge, huge})}}},
  };
  for (const Case& c : cases) {
    const std::string error = run_error(c.model, c.inputs);
    EXPECT_FALSE(error.empty()) << c.model;
    EXPECT_TRUE(contains(error, "limit") || contains(error, "overflow") || contains(error, "invalid size") ||
                contains(error, "too many") || contains(error, "cannot reshape"))
        << c.model << "\n" << error;
  }
}

TEST(DataMovement, TopKAttributeFormOfOpset1AndTiesGoToTheLowerIndex) {
  auto out = run_model(R"(
<ir_version: 7, opset_import: ["" : 9]>
g (float[6] X) => (float[3] V, int64[3] I) { V, I = TopK<k = 3>(X) }
)",
                       {{"X", floats({6}, {1, 5, 3, 5, 0.0f / 0.0f, 3})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int64_t>(out->at("I")), (std::vector<int64_t>{4, 1, 3}));  // NaN counts as largest
}

TEST(DataMovement, TopKOnFloat16ReturnsTheInputValuesExactly) {
  auto out = run_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float16[3] X, int64[1] K) => (float16[2] V, int64[2] I) { V, I = TopK<largest = 0>(X, K) }
)",
                       {{"X", tensor<uint16_t>(DType::Float16, {3}, {float_to_half(2.5f), float_to_half(-1.0f),
                                                                     float_to_half(0.1f)})},
                        {"K", ints({1}, {2})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<uint16_t>(out->at("V")), (std::vector<uint16_t>{float_to_half(-1.0f), float_to_half(0.1f)}));
  EXPECT_EQ(values<int64_t>(out->at("I")), (std::vector<int64_t>{1, 2}));
}

TEST(DataMovement, CumSumOnInt32WrapsAndReverseExclusiveWorks) {
  auto out = run_model(R"(
<ir_version: 8, opset_import: ["" : 14]>
g (int32[3] X, int32 A) => (int32[3] Y) { Y = CumSum<exclusive = 1, reverse = 1>(X, A) }
)",
                       {{"X", tensor<int32_t>(DType::Int32, {3}, {1, INT32_MAX, 2})},
                        {"A", tensor<int32_t>(DType::Int32, {}, {0})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int32_t>(out->at("Y")), (std::vector<int32_t>{INT32_MIN + 1, 2, 0}));
}

TEST(DataMovement, UniqueUnsortedKeepsFirstOccurrenceOrderWithAllFourOutputs) {
  auto out = run_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int64[6] X) => (int64[3] Y, int64[3] I, int64[6] V, int64[3] C) { Y, I, V, C = Unique<sorted = 0>(X) }
)",
                       {{"X", ints({6}, {3, 1, 3, 2, 1, 3})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values<int64_t>(out->at("Y")), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ(values<int64_t>(out->at("I")), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(values<int64_t>(out->at("V")), (std::vector<int64_t>{0, 1, 0, 2, 1, 0}));
  EXPECT_EQ(values<int64_t>(out->at("C")), (std::vector<int64_t>{3, 2, 1}));
}

TEST(DataMovement, BadAttributesAreRejectedWhenTheModelIsPrepared) {
  Model m = testing::parse_model(R"(
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
                     {"S", ints({4}, {8, 50, 30, 40})},
                     {"R", ints({4}, {2, 2, 3, 2})},
                     {"P", ints({8}, {1, 1, 2, 2, 1, 1, 2, 2})}};
  auto one = run_model(model, in, 1);
  auto two = run_model(model, in, 2);
  ASSERT_TRUE(one.ok() && two.ok()) << (one.ok() ? two.error().what : one.error().what);
  for (const char* name : {"E", "T", "Q"}) EXPECT_TRUE(one->at(name).equals(two->at(name))) << name;
}

TEST(DataMovement, EmptyTensorsFlowThroughEveryOp) {
  auto out = run_model(R"(
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
                        {"I", ints({0}, {})},
                        {"P", ints({4}, {1, 1, 1, 1})},
                        {"K", ints({1}, {0})},
                        {"R", ints({2}, {5, 2})}});
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

}  // namespace
}  // namespace reduce
