// certify: each remaining node removed once; nothing removable means 1-minimal, and only certify
// may claim it.
#include <gtest/gtest.h>

#include "reducer/reducer.h"
#include "../synthetic_test.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace testing;

TEST(Reducer, CertifyDoesNotAskAgainARemovalTheSearchAlreadyAnswered) {
  Model m = parse_model(testing::chain_model_text(8));
  // The failure needs n4..n7. input-cut's search keeps the last 1, 2, 4 (interesting) and 3
  // nodes: the last is the candidate without n4, which is certify's first single removal.
  SyntheticTest t(m, needs({"n4", "n5", "n6", "n7"}));
  ReduceOptions opts;
  opts.passes = select_passes({"input-cut", "certify"}).value();
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n4", "n5", "n6", "n7"}));
  EXPECT_TRUE(r.one_minimal);
  // input-cut's 4 probes and 3 of certify's 4 removals: the known verdict is read, not asked again.
  EXPECT_EQ(t.calls, 4u + 3u);
}

TEST(Reducer, WithoutCertifyTheResultIsNotClaimedOneMinimal) {
  Model m = parse_model(testing::chain_model_text(60));
  SyntheticTest t(m, needs({"n7", "n40"}));
  ReduceOptions opts;
  opts.passes = select_passes({}, {"certify"}).value();
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n7", "n40"}));
  EXPECT_FALSE(r.one_minimal);
}

}  // namespace
}  // namespace reduce
