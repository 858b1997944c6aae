// The Reduce* ops (ops/reduction/): axes as inputs, empty sets, exact integer sums, half
// accumulation, thread-count determinism.
#include <gtest/gtest.h>

#include <limits>

#include "core/half.h"
#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace op_test;

TEST(Reductions, AxesComeFromTheSecondInputSinceReduceSum13) {
  auto y = run_one(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3] X, int64[1] A) => (float[2] Y) { Y = ReduceSum <keepdims = 0> (X, A) }
)", {{"X", floats({2, 3}, {1, 2, 3, 4, 5, 6})}, {"A", int64s({1}, {-1})}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(values<float>(*y), (std::vector<float>{6, 15}));
}

TEST(Reductions, ReduceMean18WithoutAxesAndNoopIsTheIdentity) {
  auto y = run_one(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 2] X) => (float[2, 2] Y) { Y = ReduceMean <noop_with_empty_axes = 1> (X) }
)", {{"X", floats({2, 2}, {1, 2, 3, 4})}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(values<float>(*y), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Reductions, AnEmptySetReducesToTheIdentityOfEachReduction) {
  const std::pair<const char*, float> cases[] = {
      {"ReduceSum", 0.0f},
      {"ReduceProd", 1.0f},
      {"ReduceMax", -std::numeric_limits<float>::infinity()},
      {"ReduceMin", std::numeric_limits<float>::infinity()},
      {"ReduceLogSumExp", -std::numeric_limits<float>::infinity()},
      {"ReduceSumSquare", 0.0f},
  };
  for (const auto& [op, expected] : cases) {
    auto y = run_one(std::string(R"(
<ir_version: 8, opset_import: ["" : 12]>
g (float[0, 2] X) => (float[2] Y) { Y = )") + op + R"( <keepdims = 0, axes = [0]> (X) }
)", {{"X", Tensor::allocate(DType::Float, {0, 2}).value()}});
    ASSERT_TRUE(y.ok()) << op << ": " << y.error().message();
    EXPECT_EQ(values<float>(*y), (std::vector<float>{expected, expected})) << op;
  }
}

TEST(Reductions, IntegerSumsAreExactBeyondDoublePrecision) {
  const int64_t big = (int64_t{1} << 60) + 1;
  auto y = run_one(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int64[3] X) => (int64[1] Y) { Y = ReduceSum (X) }
)", {{"X", int64s({3}, {big, big, -big + 3})}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(values<int64_t>(*y), (std::vector<int64_t>{big + 3}));
}

TEST(Reductions, IntegerMeanTruncatesTowardZero) {
  auto y = run_one(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (int32[2, 2] X) => (int32[2] Y) { Y = ReduceMean <keepdims = 0, axes = [1]> (X) }
)", {{"X", Tensor::from_vector(DType::Int32, {2, 2}, std::vector<int32_t>{1, 2, -1, -4}).value()}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(values<int32_t>(*y), (std::vector<int32_t>{1, -2}));
}

TEST(Reductions, RepeatedOrOutOfRangeAxesAreErrors) {
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 2] X, int64[2] A) => (float[1, 1] Y) { Y = ReduceSum (X, A) }
)";
  auto repeated = run_one(model, {{"X", floats({2, 2}, {1, 2, 3, 4})}, {"A", int64s({2}, {1, -1})}});
  ASSERT_FALSE(repeated.ok());
  EXPECT_NE(repeated.error().what.find("repeated"), std::string::npos) << repeated.error().what;
  auto range = run_one(model, {{"X", floats({2, 2}, {1, 2, 3, 4})}, {"A", int64s({2}, {0, 2})}});
  ASSERT_FALSE(range.ok());
  EXPECT_NE(range.error().what.find("out of range"), std::string::npos) << range.error().what;
}

TEST(Reductions, Float16IsAccumulatedWideAndRoundedOnce) {
  // 2048 + 1 + 1 is not representable step by step in half (2049 rounds to 2048), but 2050 is.
  std::vector<uint16_t> h{float_to_half(2048), float_to_half(1), float_to_half(1)};
  auto y = run_one(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float16[3] X) => (float16[1] Y) { Y = ReduceSum (X) }
)", {{"X", Tensor::from_vector(DType::Float16, {3}, h).value()}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(half_to_float(y->data<uint16_t>()[0]), 2050.0f);
}

TEST(Reductions, ResultsDoNotDependOnTheThreadCount) {
  const char* model = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[64, 40, 120] X) => (float[64, 40, 1] Y) { Y = ReduceMean <axes = [-1]> (X) }
)";
  TensorMap in{{"X", normal_floats({64, 40, 120}, 1)}};
  auto one = run_one(model, in, "Y", 1);
  auto two = run_one(model, in, "Y", 2);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_TRUE(one->equals(*two));
}

}  // namespace
}  // namespace reduce
