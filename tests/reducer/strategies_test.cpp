// The search strategies other than the default (reduce --strategy): the baselines, ddmin and
// precision reach the same minima, for every -j.
#include <gtest/gtest.h>

#include <cstdio>

#include "reducer/reducer.h"
#include "synthetic_test.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace testing;

TEST(Reducer, BaselinesReachTheMinimumOnAChain) {
  Model m = parse_model(testing::chain_model_text(300));
  for (const char* strategy : {"polygraphy-bisect", "polygraphy-linear", "ddmin"}) {
    std::optional<Candidate> first;
    for (int jobs : {1, 3}) {
      SyntheticTest t(m, needs({"n120", "n121", "n122"}));
      ReduceOptions opts;
      opts.strategy = strategy;
      opts.jobs = jobs;
      auto r = reduce_checked(m, t, opts);
      log_counts(std::string(strategy) + " chain 300 -j " + std::to_string(jobs), r);
      EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n120", "n121", "n122"})) << strategy;
      if (!first) first = r.best;
      else EXPECT_EQ(r.best, *first) << strategy;
    }
  }
}

TEST(Reducer, DdminReachesTheSameMinimumAsTheDefault) {
  Model m = parse_model(testing::residual_model_text(12));
  auto pred = needs({"a2", "b8", "t10"});
  SyntheticTest t1(m, pred), t2(m, pred);
  auto def = reduce_checked(m, t1);
  ReduceOptions opts;
  opts.strategy = "ddmin";
  auto dd = reduce_checked(m, t2, opts);
  log_counts("residual 12 default", def);
  log_counts("residual 12 ddmin", dd);
  EXPECT_EQ(kept_names(m, dd.best), kept_names(m, def.best));
  EXPECT_TRUE(dd.one_minimal);
}

// The precision strategy minimizes a set of nodes that need not be a subgraph (what an engine keeps
// in FP32); here the test passes when the set holds n30 and n71 (e.g. both must stay in FP32).
TEST(PrecisionStrategy, FindsTheOneMinimalSetAndTheRankingSavesChecks) {
  Model m = parse_model(testing::chain_model_text(100));
  auto pred = [](const testing::CandidateView& v) { return v.has("n30") && v.has("n71"); };
  auto reduce_with = [&](std::vector<size_t> ranking, int jobs) {
    SyntheticTest t(m, pred);
    ReduceOptions opts;
    opts.strategy = "precision";
    opts.ranking = std::move(ranking);
    opts.jobs = jobs;
    auto r = reduce_model(m, t, opts);
    EXPECT_TRUE(r.ok());
    return r.ok() ? std::move(r).value() : ReduceResult{};
  };
  const auto unranked = reduce_with({}, 1);
  EXPECT_EQ(kept_names(m, unranked.best), (std::set<std::string>{"n30", "n71"}));
  EXPECT_TRUE(unranked.one_minimal);
  // A ranking that names the needed nodes first: the shortest prefix holds them.
  std::vector<size_t> ranking = {71, 30, 5, 99};
  const auto ranked = reduce_with(ranking, 1);
  EXPECT_EQ(ranked.best, unranked.best);
  EXPECT_TRUE(ranked.one_minimal);
  EXPECT_LT(ranked.checks, unranked.checks);
  std::printf("[ counts ] precision chain 100: %zu checks unranked, %zu ranked\n", unranked.checks, ranked.checks);
  EXPECT_EQ(reduce_with(ranking, 4).best, ranked.best);
  EXPECT_EQ(reduce_with({}, 4).best, unranked.best);
}

// Without a ranking (the layerwise run failed to build), one node in FP32 is found by halving
// the set: log2(n) + 1 checks where node-removal's bands took about half again as many; the same
// set for every -j.
TEST(PrecisionStrategy, WithoutARankingOneNodeIsFoundByHalvingTheSet) {
  Model m = parse_model(testing::chain_model_text(64));
  for (int jobs : {1, 4}) {
    SyntheticTest t(m, [](const testing::CandidateView& v) { return v.has("n37"); });
    ReduceOptions opts;
    opts.strategy = "precision";
    opts.jobs = jobs;
    auto r = reduce_model(m, t, opts);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(kept_names(m, r->best), (std::set<std::string>{"n37"}));
    EXPECT_TRUE(r->one_minimal);
    if (jobs == 1) {
      EXPECT_LE(t.calls, 6u + 1u) << "log2(64) halvings and the single node's own check";
    }
  }
}

}  // namespace
}  // namespace reduce
