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

// n4 and n7 are needed; n2 only while n6 is there (a failure that is not monotone in the nodes
// kept: n2's removal goes only once n6 is gone).
bool needs_n2_while_n6(const testing::CandidateView& v) {
  return v.has("n4") && v.has("n7") && (!v.has("n6") || v.has("n2"));
}

TEST(Reducer, CertifySweepsAgainOnlyOverTheNodesTriedBeforeItsLastRemoval) {
  Model m = parse_model(testing::chain_model_text(8));
  SyntheticTest t(m, needs_n2_while_n6);
  ReduceOptions opts;
  opts.passes = select_passes({"certify"}).value();
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n4", "n7"}));
  EXPECT_TRUE(r.one_minimal);
  // The first sweep tries all 8 and removes n6 last: n2 and n4 were tried before it and are tried
  // again (n2 goes); n7 was tried after it, against the final candidate. A sweep of all that is
  // left after every removal (a round of certify each) took 8 + 3 + 2.
  EXPECT_EQ(t.calls, 8u + 2u);
}

TEST(Reducer, CertifysRemovalsOpenNoOtherRoundOfThePasses) {
  Model m = parse_model(testing::chain_model_text(8));
  SyntheticTest t(m, needs_n2_while_n6);
  std::vector<std::string> lines;
  ReduceOptions opts;
  opts.passes = select_passes({"output-cut", "certify"}).value();
  opts.log = [&](const std::string& line) { lines.push_back(line); };
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n4", "n7"}));
  EXPECT_TRUE(r.one_minimal);
  // output-cut finds nothing (every sink's ancestors lack n7 but the last's); certify's sweeps
  // remove six nodes and end 1-minimal: output-cut is not started again on what they left.
  for (const auto& line : lines) EXPECT_NE(line.rfind("round ", 0), 0u) << line;
  ASSERT_EQ(r.passes.size(), 2u);
  EXPECT_EQ(r.passes[1].name, "certify");
  EXPECT_EQ(r.passes[1].successes, 6u);
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
