// Pooling, resampling, recurrent and Loop/Scan kernels: behaviour the ONNX conformance suite does not cover
// (error paths, other dtypes, LpPool, thread-count independence of the parallel kernels).
#include <gtest/gtest.h>

#include <random>

#include "core/half.h"
#include "engine/engine.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;

Tensor floats(Shape shape, std::vector<float> v) { return Tensor::from_vector(DType::Float, std::move(shape), v).value(); }

Tensor random_floats(Shape shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return floats(std::move(shape), v);
}

std::vector<float> values(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

Expected<TensorMap> run_with(const Model& m, const TensorMap& in, int threads) {
  auto prepared = make_reference_engine(threads)->prepare(m);
  if (!prepared.ok()) return prepared.error();
  return (*prepared)->run(in);
}

TensorMap run_ok(const Model& m, const TensorMap& in, int threads = 0) {
  auto out = run_with(m, in, threads);
  EXPECT_TRUE(out.ok()) << out.error().message();
  return out.ok() ? std::move(out).value() : TensorMap{};
}

std::string run_error(const Model& m, const TensorMap& in) {
  auto out = run_with(m, in, 1);
  EXPECT_FALSE(out.ok());
  return out.ok() ? std::string() : out.error().message();
}

void expect_same_for_one_and_two_threads(const char* text, const TensorMap& in) {
  Model m = parse_model(text);
  TensorMap one = run_ok(m, in, 1), two = run_ok(m, in, 2);
  ASSERT_FALSE(one.empty());
  for (const auto& [name, t] : one) EXPECT_TRUE(t.equals(two.at(name))) << name;
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
)", {{"X", random_floats({2, 48, 64, 64}, 1)}});
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
)", {{"X", random_floats({1, 24, 40, 40}, 2)}, {"S", floats({4}, s)}});
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

TEST(Resampling, ResizeScalesThatWouldNeedTerabytesAreRefused) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 1, 4, 4] X, float[4] S) => (float[1, 1, ?, ?] Y)
{
  Y = Resize (X, , S)
}
)");
  EXPECT_FALSE(run_error(m, {{"X", random_floats({1, 1, 4, 4}, 3)}, {"S", floats({4}, {1, 1, 1e6f, 1e6f})}}).empty());
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

TEST(Resampling, RoiAlignRefusesABatchIndexOutOfRange) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 16]>
g (float[1, 1, 4, 4] X, float[1, 4] R, int64[1] B) => (float[1, 1, 1, 1] Y)
{
  Y = RoiAlign (X, R, B)
}
)");
  auto b = Tensor::from_vector<int64_t>(DType::Int64, {1}, {3}).value();
  EXPECT_NE(run_error(m, {{"X", random_floats({1, 1, 4, 4}, 4)}, {"R", floats({1, 4}, {0, 0, 2, 2})}, {"B", b}}).find("batch index 3"),
            std::string::npos);
}

const char* kLstm = R"(
<ir_version: 8, opset_import: ["" : 14]>
g (float[5, 3, 4] X, float[2, 12, 4] W, float[2, 12, 3] R, int32[3] L) => (float[5, 2, 3, 3] Y, float[2, 3, 3] H, float[2, 3, 3] C)
{
  Y, H, C = LSTM <hidden_size = 3, direction = "bidirectional"> (X, W, R, , L)
}
)";

TEST(Recurrent, SequenceLengthsOutsideTheSequenceAreRefused) {
  Model m = parse_model(kLstm);
  auto l = Tensor::from_vector<int32_t>(DType::Int32, {3}, {5, 6, 1}).value();
  TensorMap in{{"X", random_floats({5, 3, 4}, 5)}, {"W", random_floats({2, 12, 4}, 6)}, {"R", random_floats({2, 12, 3}, 7)}, {"L", l}};
  EXPECT_NE(run_error(m, in).find("sequence_lens value 6"), std::string::npos);
}

TEST(Recurrent, StepsPastASequenceLengthAreZeroAndBidirectionalLstmIsThreadIndependent) {
  Model m = parse_model(kLstm);
  auto l = Tensor::from_vector<int32_t>(DType::Int32, {3}, {5, 2, 0}).value();
  TensorMap in{{"X", random_floats({5, 3, 4}, 5)}, {"W", random_floats({2, 12, 4}, 6)}, {"R", random_floats({2, 12, 3}, 7)}, {"L", l}};
  TensorMap one = run_ok(m, in, 1), two = run_ok(m, in, 2);
  for (const auto& [name, t] : one) EXPECT_TRUE(t.equals(two.at(name))) << name;
  auto y = one.at("Y").data<float>();
  // Y is [seq, dir, batch, hidden]: batch 1 stops after 2 steps, batch 2 never starts.
  for (int64_t t = 0; t < 5; ++t)
    for (int64_t d = 0; d < 2; ++d)
      for (int64_t h = 0; h < 3; ++h) {
        if (t >= 2) {
          EXPECT_EQ(y[static_cast<size_t>(((t * 2 + d) * 3 + 1) * 3 + h)], 0.0f);
        }
        EXPECT_EQ(y[static_cast<size_t>(((t * 2 + d) * 3 + 2) * 3 + h)], 0.0f);
      }
}

TEST(Recurrent, UnknownActivationIsRefusedWhenPreparing) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 14]>
g (float[1, 1, 2] X, float[1, 3, 2] W, float[1, 3, 1] R) => (float[1, 1, 1, 1] Y)
{
  Y = GRU <hidden_size = 1, activations = ["Sigmoid", "Wobble"]> (X, W, R)
}
)");
  auto prepared = make_reference_engine(1)->prepare(m);
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.error().message().find("Wobble"), std::string::npos);
}

TEST(ControlFlow, LoopCarriesValuesStacksScanOutputsAndReadsOuterValues) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 16]>
g (int64 M, float[1] V, float[1] Step) => (float[1] Final, float[3, 1] Trace)
{
  Final, Trace = Loop (M, , V) <
    body = b (int64 i, bool c, float[1] v) => (bool c_out, float[1] v_out, float[1] s) {
      c_out = Identity (c)
      v_out = Add (v, Step)
      s = Identity (v_out)
    }
  >
}
)");
  auto M = Tensor::from_vector<int64_t>(DType::Int64, {}, {3}).value();
  TensorMap out = run_ok(m, {{"M", M}, {"V", floats({1}, {1})}, {"Step", floats({1}, {0.5f})}});
  EXPECT_EQ(values(out.at("Final")), (std::vector<float>{2.5f}));
  EXPECT_EQ(out.at("Trace").shape(), (Shape{3, 1}));
  EXPECT_EQ(values(out.at("Trace")), (std::vector<float>{1.5f, 2, 2.5f}));
}

TEST(ControlFlow, LoopWithZeroTripsGivesEmptyScanOutputsShapedLikeTheBody) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 16]>
g (int64 M, float[1] V) => (float[1] Final, float[?, 2] Trace)
{
  Final, Trace = Loop (M, , V) <
    body = b (int64 i, bool c, float[1] v) => (bool c_out, float[1] v_out, float[2] s) {
      c_out = Identity (c)
      v_out = Identity (v)
      s = Identity (v)
    }
  >
}
)");
  auto M = Tensor::from_vector<int64_t>(DType::Int64, {}, {0}).value();
  TensorMap out = run_ok(m, {{"M", M}, {"V", floats({1}, {4})}});
  EXPECT_EQ(values(out.at("Final")), (std::vector<float>{4}));
  EXPECT_EQ(out.at("Trace").shape(), (Shape{0, 2}));
}

TEST(ControlFlow, ScanRunsBackwardAlongTheChosenAxis) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 16]>
g (float[2] S0, float[2, 3] X) => (float[2] S, float[2, 3] Out)
{
  S, Out = Scan <num_scan_inputs = 1, scan_input_axes = [1], scan_input_directions = [1], scan_output_axes = [1],
                 body = b (float[2] s, float[2] x) => (float[2] s_out, float[2] y) {
                   s_out = Add (s, x)
                   y = Identity (s_out)
                 }> (S0, X)
}
)");
  TensorMap out = run_ok(m, {{"S0", floats({2}, {0, 0})}, {"X", floats({2, 3}, {1, 2, 3, 10, 20, 30})}});
  EXPECT_EQ(values(out.at("S")), (std::vector<float>{6, 60}));
  // Columns are visited 2, 1, 0; output column k holds the running sum after the k-th visit.
  EXPECT_EQ(values(out.at("Out")), (std::vector<float>{3, 5, 6, 30, 50, 60}));
}

}  // namespace
}  // namespace reduce
