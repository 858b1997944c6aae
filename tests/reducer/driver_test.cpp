// reduce_model's driver on the default strategy: exact minima, 1-minimality, well-formed candidates
// only, the same result for every -j, rounds, the simplification budget, stop and resume, pass lists.
#include <gtest/gtest.h>

#include <cstdio>

#include "reducer/reducer.h"
#include "synthetic_test.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace testing;

TEST(Reducer, ChainOfAThousandReachesTwoDistantNodesInFewChecks) {
  Model m = parse_model(testing::chain_model_text(1000));
  SyntheticTest t(m, needs({"n300", "n700"}));
  auto r = reduce_checked(m, t);
  log_counts("chain 1000, {n300, n700}", r);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n300", "n700"}));
  EXPECT_TRUE(r.one_minimal);
  EXPECT_LT(r.checks - r.cache_hits, 200u);
}

TEST(Reducer, ChainOfAThousandReachesAdjacentPairWithCutsAlone) {
  Model m = parse_model(testing::chain_model_text(1000));
  SyntheticTest t(m, needs({"n500", "n501"}));
  auto r = reduce_checked(m, t);
  log_counts("chain 1000, {n500, n501}", r);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n500", "n501"}));
  EXPECT_TRUE(r.one_minimal);
  EXPECT_LT(r.checks - r.cache_hits, 60u);
}

TEST(Reducer, KeepsTwoNodesAndTheOutputOfAThird) {
  Model m = parse_model(testing::residual_model_text(20));
  // Interesting iff a3 and b9 are kept and t7's value is an output of the candidate model.
  SyntheticTest t(m, [](const CandidateView& v) { return v.has("a3") && v.has("b9") && v.outputs_has("t7"); });
  auto r = reduce_checked(m, t);
  log_counts("residual 20, {a3, b9} + output t7", r);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"a3", "b9", "t7"}));
  EXPECT_TRUE(r.one_minimal);
}

TEST(Reducer, ConnectedPathIsKeptWhole) {
  Model m = parse_model(testing::residual_model_text(20));
  // Interesting iff x flows into h12 through kept nodes from a4: the path a4 -> b4 -> h4 -> ... -> h12
  // along the residual adds (h{i} reads h{i-1}).
  SyntheticTest t(m, [](const CandidateView& v) {
    if (!v.has("a4") || !v.has("b4")) return false;
    for (int i = 4; i <= 12; ++i)
      if (!v.has("h" + std::to_string(i))) return false;
    return true;
  });
  auto r = reduce_checked(m, t);
  log_counts("residual 20, path a4..h12", r);
  std::set<std::string> want{"a4", "b4"};
  for (int i = 4; i <= 12; ++i) want.insert("h" + std::to_string(i));
  EXPECT_EQ(kept_names(m, r.best), want);
  EXPECT_TRUE(r.one_minimal);
}

TEST(Reducer, FusionNeedsTheWholeChainAndUnmarkedIntermediates) {
  Model m = parse_model(testing::chain_model_text(200));
  // A fused pattern n90 -> n91 -> n92 fails only while whole and while n90, n91 are not outputs.
  SyntheticTest t(m, [](const CandidateView& v) {
    return v.has("n90") && v.has("n91") && v.has("n92") && !v.outputs_has("n90") && !v.outputs_has("n91");
  });
  auto r = reduce_checked(m, t);
  log_counts("chain 200, fusion n90-n92", r);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n90", "n91", "n92"}));
  EXPECT_TRUE(r.one_minimal);
  EXPECT_LT(r.checks - r.cache_hits, 80u);
}

TEST(Reducer, WithManySlotsTheNextPassesRunAlongsideTheEndOfAPass) {
  Model m = parse_model(testing::chain_model_text(200));
  // n120 computes a wrong value (so does everything after it); the failure does not care how
  // n120's input arrives, so the reproducer is n120 alone with its input frozen.
  auto wrong = [](const std::string& o) { return o[0] == 'n' && std::stoi(o.substr(1)) >= 120; };
  auto pred = [&](const CandidateView& v) {
    return v.has("n120") && std::any_of(v.outputs.begin(), v.outputs.end(), wrong);
  };
  SyntheticTest sequential(m, pred);
  sequential.failing_outputs = wrong;
  const auto expected = reduce_checked(m, sequential);
  EXPECT_EQ(kept_names(m, expected.best), (std::set<std::string>{"n120"}));
  EXPECT_EQ(expected.best.frozen.size(), 1u);
  // -j 1 waits for each of its checks in turn. With 16 slots: the fully marked model's check
  // (it names the wrong values); the prefix ending at n120 together with what follows if it
  // fails: n120 with its ancestors, n120 alone (input-cut), n120 alone with its input frozen
  // (cut-as-constant); then fill-weights on the frozen value (5 trips without speculation
  // across passes).
  SyntheticTest inner(m, pred);
  inner.failing_outputs = wrong;
  testing::RoundTripCounter counter(inner);
  ReduceOptions opts;
  opts.jobs = 16;
  opts.on_wait = counter.observer();
  auto r = reduce_model(m, counter, opts);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->best, expected.best);
  std::printf("[ counts ] chain 200, n120 reported wrong: %zu checks at -j 1, %zu round trips at -j 16\n",
              sequential.calls.load(), counter.trips());
  EXPECT_LE(counter.trips(), 3u);
}

TEST(Reducer, ResultIsTheSameForEveryJobCount) {
  Model m = parse_model(testing::residual_model_text(25));
  auto pred = [](const CandidateView& v) {
    // Not monotone on purpose: a4 and h9 needed, and the candidate must not keep b20.
    return v.has("a4") && v.has("h9") && !v.has("b20") && v.outputs.size() <= 3;
  };
  std::optional<Candidate> first;
  for (int jobs : {1, 2, 4}) {
    SyntheticTest t(m, pred, jobs == 4 ? 1 : 0);
    ReduceOptions opts;
    opts.jobs = jobs;
    auto r = reduce_checked(m, t, opts);
    log_counts("residual 25 -j " + std::to_string(jobs), r);
    if (!first) first = r.best;
    else EXPECT_EQ(r.best, *first) << "-j " << jobs;
  }
}

TEST(Reducer, WideSpeculationAcrossRoundsGivesTheSameResult) {
  Model m = parse_model(testing::residual_model_text(60));
  // Not monotone: removing b30 alone hides the failure, removing a30 too brings it back; and
  // an output of a late side branch is needed. Deep speculation trees (-j 16) and confirming-round
  // prefetches must not change what -j 1 finds.
  auto pred = [](const CandidateView& v) {
    return v.has("a5") && v.has("h40") && (v.has("b30") || !v.has("a30")) && v.outputs_has("t52");
  };
  std::optional<ReduceResult> first;
  for (int jobs : {1, 7, 16}) {
    SyntheticTest t(m, pred);
    ReduceOptions opts;
    opts.jobs = jobs;
    auto r = reduce_checked(m, t, opts);
    log_counts("residual 60 -j " + std::to_string(jobs), r);
    if (!first) {
      first = r;
      continue;
    }
    EXPECT_EQ(r.best, first->best) << "-j " << jobs;
    EXPECT_EQ(r.one_minimal, first->one_minimal) << "-j " << jobs;
  }
}

TEST(Reducer, SlowTestsGiveTheSameResultInParallel) {
  Model m = parse_model(testing::chain_model_text(120));
  std::optional<Candidate> first;
  for (int jobs : {1, 4}) {
    SyntheticTest t(m, needs({"n10", "n70", "n71"}), 2);
    ReduceOptions opts;
    opts.jobs = jobs;
    auto r = reduce_checked(m, t, opts);
    log_counts("chain 120 slow -j " + std::to_string(jobs), r);
    EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n10", "n70", "n71"}));
    if (!first) first = r.best;
    else EXPECT_EQ(r.best, *first);
  }
}

TEST(Reducer, StopFlagReturnsTheBestSoFar) {
  Model m = parse_model(testing::chain_model_text(400));
  std::atomic<bool> stop{false};
  SyntheticTest t(m, [&](const CandidateView& v) { return v.has("n50") && v.has("n350"); });
  ReduceOptions opts;
  opts.jobs = 2;
  opts.stop = &stop;
  size_t improvements = 0;
  opts.on_improvement = [&](const Candidate&, size_t) {
    if (++improvements == 2) stop = true;
  };
  auto r = reduce_checked(m, t, opts);
  EXPECT_TRUE(r.stopped);
  EXPECT_FALSE(r.one_minimal);
  const auto kept = kept_names(m, r.best);
  EXPECT_TRUE(kept.count("n50") && kept.count("n350"));
  EXPECT_GT(kept.size(), 2u);
}

TEST(Reducer, StartCandidateIsHonoured) {
  Model m = parse_model(testing::chain_model_text(100));
  SyntheticTest t(m, needs({"n40"}));
  ReduceOptions opts;
  opts.start = Candidate{};
  for (size_t i = 30; i < 60; ++i) opts.start->nodes.push_back(i);
  std::vector<Candidate> seen;
  opts.on_improvement = [&](const Candidate& c, size_t) { seen.push_back(c); };
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n40"}));
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), r.best);
  for (const auto& c : seen)
    for (size_t n : c.nodes) EXPECT_TRUE(n >= 30 && n < 60);
}

TEST(Reducer, SimplificationsSpendAtMostTheirEngineRunsAndTheNodeSetIsStillCertified) {
  Model m = parse_model(kWeighted);
  // Every weight can be filled and every attribute dropped: unlimited, the simplification
  // passes commit all of it.
  auto all_four = needs({"m", "t", "a", "y"});
  SyntheticTest unlimited(m, all_four);
  auto full = reduce_checked(m, unlimited);
  EXPECT_EQ(full.best.filled.size(), 2u);
  EXPECT_FALSE(full.best.dropped_attributes.empty());
  EXPECT_FALSE(full.simplify_budget_reached);
  ASSERT_GT(full.simplify_runs, 1u);
  // With one engine run: shape-reduction's first probe (every dim at 1) is the only one; fill-
  // weights and drop-attributes never start; certify still sweeps the nodes.
  SyntheticTest bounded(m, all_four);
  ReduceOptions opts;
  opts.simplify_runs = 1;
  size_t spent_at_shape_commit = 0;
  opts.on_improvement = [&](const Candidate& c, size_t spent) {
    if (!c.input_shapes.empty() && spent_at_shape_commit == 0) spent_at_shape_commit = spent;
  };
  auto r = reduce_checked(m, bounded, opts);
  EXPECT_EQ(spent_at_shape_commit, 1u) << "the run that made the commit counts with it (the journal's record)";
  EXPECT_EQ(r.simplify_runs, 1u);
  EXPECT_TRUE(r.simplify_budget_reached);
  EXPECT_EQ(r.best.input_shapes.at("x"), (Shape{1, 1}));
  EXPECT_TRUE(r.best.filled.empty());
  EXPECT_TRUE(r.best.dropped_attributes.empty());
  EXPECT_EQ(r.best.nodes, full.best.nodes);
  EXPECT_TRUE(r.one_minimal);
  EXPECT_LE(bounded.calls + full.simplify_runs, unlimited.calls + 1) << "the runs saved are the simplifications'";
  // --resume from the whole model with the run already spent: nothing more is simplified.
  SyntheticTest resumed(m, all_four);
  opts.on_improvement = nullptr;
  opts.start = Candidate::whole(m.graph);
  opts.simplify_runs_spent = 1;
  auto again = reduce_checked(m, resumed, opts);
  EXPECT_EQ(again.simplify_runs, 1u);
  EXPECT_TRUE(again.best.input_shapes.empty());
  EXPECT_TRUE(again.simplify_budget_reached);
  opts.start.reset();
  opts.simplify_runs_spent = 0;
  // No run at all: the model is kept as it is, and still certified.
  SyntheticTest none(m, all_four);
  opts.simplify_runs = 0;
  auto z = reduce_checked(m, none, opts);
  EXPECT_EQ(z.simplify_runs, 0u);
  EXPECT_TRUE(z.best.filled.empty());
  EXPECT_TRUE(z.one_minimal);
}

// Round 1 reaches the four nodes and simplifies them (weights filled, an attribute dropped): round
// 2 starts no pass again on those same nodes, but certify, whose probes the cache answers. The
// whole of round 2 costs no check.
TEST(Reducer, ALaterRoundStartsNoPassAgainOnTheNodesItEndedOn) {
  Model m = parse_model(kWeighted);
  SyntheticTest t(m, needs({"m", "t", "a", "y"}));
  std::vector<std::string> lines;
  ReduceOptions opts;
  opts.log = [&](const std::string& line) { lines.push_back(line); };
  auto r = reduce_checked(m, t, opts);
  EXPECT_TRUE(r.one_minimal);
  EXPECT_FALSE(r.best.filled.empty());
  size_t round_one = 0;
  for (const auto& line : lines)
    if (line.rfind("round 1 done: ", 0) == 0) round_one = std::stoul(line.substr(line.find(", ") + 2));
  ASSERT_GT(round_one, 0u) << "round 1 changed the candidate, so a round 2 ran";
  EXPECT_EQ(r.checks, round_one);
  EXPECT_EQ(t.calls, round_one - r.cache_hits);
}

TEST(Reducer, PassListComesFromTheDefFile) {
  std::vector<std::string> names;
  for (const auto& p : reduce_passes()) names.push_back(p.name);
  EXPECT_EQ(names.front(), "first-divergence");
  EXPECT_EQ(names.back(), "certify");
  Model m = parse_model(testing::chain_model_text(5));
  SyntheticTest t(m, needs({"n1"}));
  ReduceOptions opts;
  EXPECT_FALSE(select_passes({"no-such-pass"}).ok());
  EXPECT_FALSE(select_passes({}, {"no-such-pass"}).ok());
  opts.strategy = "no-such-strategy";
  EXPECT_FALSE(reduce_model(m, t, opts).ok());
}

TEST(Reducer, PassSelectionIsResolvedFromNamesOnce) {
  EXPECT_EQ(PassSelection().count(), reduce_passes().size());
  auto only = select_passes({"node-removal", "certify"}, {"certify"});
  ASSERT_TRUE(only.ok());
  EXPECT_EQ(only->count(), 1u);
  for (size_t i = 0; i < reduce_passes().size(); ++i)
    EXPECT_EQ(only->runs(i), std::string(reduce_passes()[i].name) == "node-removal") << reduce_passes()[i].name;
  auto skip = select_passes({}, {"certify"});
  ASSERT_TRUE(skip.ok());
  EXPECT_EQ(skip->count(), reduce_passes().size() - 1);
  EXPECT_FALSE(skip->runs(reduce_passes().size() - 1));  // certify is the last pass
  auto bad = select_passes({"first-divergence", "nonsense"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().what, "unknown pass 'nonsense' (see --print-passes)");
}

}  // namespace
}  // namespace reduce
