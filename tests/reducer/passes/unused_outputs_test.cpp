// unused-outputs: a candidate model with several outputs keeps a single one when that one shows the
// failure (fewer values compared, a smaller report), and a model with one output is left alone.
#include <gtest/gtest.h>

#include "reducer/reducer.h"
#include "../synthetic_test.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace testing;

TEST(Reducer, UnusedOutputsKeepsTheOneOutputThatShowsTheFailure) {
  // Outputs h3 and t1 (the side output of block 1); the failure shows in t1 alone.
  Model m = parse_model(residual_model_text(4));
  SyntheticTest t(m, [](const CandidateView& v) { return v.outputs_has("t1"); });
  ReduceOptions opts;
  opts.passes = select_passes({"unused-outputs"}).value();
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(model_outputs(m, r.best), (std::vector<std::string>{"t1"}));
  // One candidate per output at most, each marking that output alone.
  EXPECT_LE(t.calls, 2u);
}

TEST(Reducer, UnusedOutputsAsksNothingOfAModelWithOneOutput) {
  Model m = parse_model(chain_model_text(6));
  SyntheticTest t(m, needs({"n2"}));
  ReduceOptions opts;
  opts.passes = select_passes({"unused-outputs"}).value();
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(t.calls, 0u);
  EXPECT_EQ(r.best.nodes.size(), 6u);
}

}  // namespace
}  // namespace reduce
