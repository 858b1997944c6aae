// cut-as-constant: cut values fed as constants (initializers) when the failure needs them so.
#include <gtest/gtest.h>

#include "reducer/reducer.h"
#include "../synthetic_test.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace testing;

TEST(Reducer, CutValuesAreFrozenWhenTheFailureNeedsConstants) {
  Model m = parse_model(testing::chain_model_text(50));
  // n20 fails only when its input is a constant, once n19 is gone.
  SyntheticTest t(m, [](const CandidateView& v) { return v.has("n20") && (v.has("n19") || !v.inputs.count("n19")); });
  auto r = reduce_checked(m, t);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n20"}));
  EXPECT_EQ(r.best.frozen, (std::vector<std::string>{"n19"}));
}

}  // namespace
}  // namespace reduce
