// node-removal: groups of nodes removed by post-dominated subtrees and counter-based delta debugging.
#include <gtest/gtest.h>

#include <cstdio>

#include "reducer/reducer.h"
#include "../synthetic_test.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace testing;

TEST(Reducer, NodeRemovalStartsFromWhatEarlierPassesLearnedAboutNeededNodes) {
  Model m = parse_model(testing::chain_model_text(1000));
  // Two distant nodes are needed. first-divergence and input-cut find them at the ends of the
  // kept range; node-removal must then drop the 399 nodes between them. Its predictor reads the
  // cuts' answers (removing either end loses the failure), so its first windows already expect
  // every chunk holding an end to fail and every other chunk to go: 3 round trips (8 when it
  // learns only from its own answers).
  auto pred = needs({"n300", "n700"});
  SyntheticTest sequential(m, pred);
  const auto expected = reduce_checked(m, sequential);
  EXPECT_EQ(kept_names(m, expected.best), (std::set<std::string>{"n300", "n700"}));
  SyntheticTest inner(m, pred);
  testing::RoundTripCounter counter(inner);
  testing::TripsPerPass per_pass(counter);
  ReduceOptions opts;
  opts.jobs = 16;
  opts.on_progress = per_pass.observer();
  opts.on_wait = counter.observer();
  auto r = reduce_model(m, counter, opts);
  ASSERT_TRUE(r.ok());
  per_pass.finish();
  EXPECT_EQ(r->best, expected.best);
  std::printf("[ counts ] chain 1000 {n300, n700}, -j 16 round trips: %s\n", per_pass.summary().c_str());
  EXPECT_LE(per_pass.of("node-removal"), 5u);
}

TEST(Reducer, OnAFewNodesNodeRemovalLeavesTheSinglesToCertify) {
  Model m = parse_model(testing::chain_model_text(6));
  // Every node is needed: the candidate is 1-minimal from the start. Each single removal is
  // asked once (certify); no group of node-removal's is asked on top.
  SyntheticTest t(m, needs({"n0", "n1", "n2", "n3", "n4", "n5"}));
  ReduceOptions opts;
  opts.passes = select_passes({"node-removal", "certify"}).value();
  auto r = reduce_checked(m, t, opts);
  EXPECT_TRUE(r.one_minimal);
  EXPECT_EQ(r.best.nodes.size(), m.graph.nodes.size());
  EXPECT_EQ(t.calls, m.graph.nodes.size());
}

}  // namespace
}  // namespace reduce
