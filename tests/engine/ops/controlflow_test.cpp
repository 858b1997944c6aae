// Loop and Scan (ops/controlflow/): carried values, scan outputs, outer-scope reads, zero trips,
// backward scans.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace op_test;
using testing::parse_model;

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
