// DFT, STFT and the window ops (ops/signal/): inverse transforms, sizes refused before allocating.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace op_test;

TEST(SignalProcessing, ADftLengthNeedingTerabytesIsRefused) {
  auto y = run_one(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 4, 1] X, int64 L) => (float[1, 4, 2] Y) { Y = DFT (X, L) }
)", {{"X", floats({1, 4, 1}, {1, 2, 3, 4})}, {"L", int64s({}, {int64_t{1} << 40})}});
  ASSERT_FALSE(y.ok());
}

TEST(SignalProcessing, AWindowSizeNeedingTerabytesIsRefused) {
  auto y = run_one(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64 N) => (float[1] Y) { Y = HannWindow (N) }
)", {{"N", int64s({}, {int64_t{1} << 42})}});
  ASSERT_FALSE(y.ok());
}

TEST(SignalProcessing, InverseDftUndoesTheForwardTransform) {
  auto y = run_one(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 5, 1] X) => (float[1, 5, 2] Y) { F = DFT (X)  Y = DFT <inverse = 1> (F) }
)", {{"X", floats({1, 5, 1}, {1, -2, 3, 0.5f, 7})}});
  ASSERT_TRUE(y.ok()) << y.error().message();
  const std::vector<float> expected{1, 0, -2, 0, 3, 0, 0.5f, 0, 7, 0};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(y->data<float>()[i], expected[i], 1e-5f) << i;
}

TEST(SignalProcessing, MelEdgesBeyondTheSpectrumAreErrors) {
  auto y = run_one(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, int64 L, int64 R, float Lo, float Hi) => (float[5, 4] Y) { Y = MelWeightMatrix (M, L, R, Lo, Hi) }
)", {{"M", int64s({}, {4})}, {"L", int64s({}, {8})}, {"R", int64s({}, {8000})}, {"Lo", floats({}, {0})},
     {"Hi", floats({}, {16000})}});
  ASSERT_FALSE(y.ok());
}

// -- DFT

TEST(DFT, OnesidedInverseRebuildsTheRealSignal) {
  // The one-sided spectrum of [1, 2, 3, 4]: 10, -2 + 2i, -2.
  auto out = run(R"(
<ir_version: 10, opset_import: ["" : 20]>
g (float[1, 3, 2] X) => (float[1, 4, 1] Y) { Y = DFT <inverse = 1, onesided = 1> (X) }
)", {{"X", floats({1, 3, 2}, {10, 0, -2, 2, -2, 0})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->at("Y").shape(), (Shape{1, 4, 1}));
  expect_near(values<float>(out->at("Y")), {1, 2, 3, 4}, 1e-6f);
}

TEST(DFT, OnesidedInverseOfARealInputIsAnError) {
  expect_error(run(R"(
<ir_version: 10, opset_import: ["" : 20]>
g (float[1, 3, 1] X) => (float[1, 4, 1] Y) { Y = DFT <inverse = 1, onesided = 1> (X) }
)", {{"X", floats({1, 3, 1}, {1, 2, 3})}}), "complex");
}

}  // namespace
}  // namespace reduce
