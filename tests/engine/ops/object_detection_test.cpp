// RoiAlign and NonMaxSuppression (ops/object_detection/): indices that come from data are checked.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace op_test;
using testing::parse_model;

TEST(Resampling, RoiAlignRefusesABatchIndexOutOfRange) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 16]>
g (float[1, 1, 4, 4] X, float[1, 4] R, int64[1] B) => (float[1, 1, 1, 1] Y)
{
  Y = RoiAlign (X, R, B)
}
)");
  auto b = Tensor::from_vector<int64_t>(DType::Int64, {1}, {3}).value();
  EXPECT_NE(run_error(m, {{"X", random_floats({1, 1, 4, 4}, 4, -4, 4)}, {"R", floats({1, 4}, {0, 0, 2, 2})}, {"B", b}}).find("batch index 3"),
            std::string::npos);
}

}  // namespace
}  // namespace reduce
