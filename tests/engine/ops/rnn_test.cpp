// RNN, GRU and LSTM (ops/rnn/): sequence lengths, activations, thread-count independence.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "op_test_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace op_test;
using testing::parse_model;

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
  TensorMap in{{"X", random_floats({5, 3, 4}, 5, -4, 4)}, {"W", random_floats({2, 12, 4}, 6, -4, 4)}, {"R", random_floats({2, 12, 3}, 7, -4, 4)}, {"L", l}};
  EXPECT_NE(run_error(m, in).find("sequence_lens value 6"), std::string::npos);
}

TEST(Recurrent, StepsPastASequenceLengthAreZeroAndBidirectionalLstmIsThreadIndependent) {
  Model m = parse_model(kLstm);
  auto l = Tensor::from_vector<int32_t>(DType::Int32, {3}, {5, 2, 0}).value();
  TensorMap in{{"X", random_floats({5, 3, 4}, 5, -4, 4)}, {"W", random_floats({2, 12, 4}, 6, -4, 4)}, {"R", random_floats({2, 12, 3}, 7, -4, 4)}, {"L", l}};
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

}  // namespace
}  // namespace reduce
