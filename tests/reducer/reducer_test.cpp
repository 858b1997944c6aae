// reduce_model on synthetic interestingness tests: exact minima, 1-minimality, well-formed
// candidates only, the same result for every -j, baselines, stop and resume.
#include <gtest/gtest.h>

#include <cstdio>

#include "reducer/parallelism.h"
#include "reducer/reducer.h"
#include "synthetic_test.h"
#include "test_support.h"

namespace reduce {
namespace {

// As the executable's main: -j checks in flight beyond the cores of this machine.
const CheckParallelism kParallelism(64);

using testing::CandidateView;
using testing::parse_model;
using testing::SyntheticTest;

std::set<std::string> kept_names(const Model& m, const Candidate& c) {
  std::set<std::string> out;
  for (size_t n : c.nodes) out.insert(m.graph.nodes[n].outputs[0]);
  return out;
}

ReduceResult run(const Model& m, SyntheticTest& t, ReduceOptions opts = {}) {
  auto r = reduce_model(m, t, opts);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  EXPECT_EQ(t.malformed, 0u);
  EXPECT_EQ(t.unextractable, 0u);
  return r.ok() ? std::move(r).value() : ReduceResult{};
}

void log_counts(const std::string& what, const ReduceResult& r) {
  std::printf("[ counts ] %s: %zu checks (%zu cached), %zu nodes%s\n", what.c_str(), r.checks, r.cache_hits,
              r.best.nodes.size(), r.one_minimal ? ", 1-minimal" : "");
}

auto needs(std::vector<std::string> nodes) {
  return [nodes](const CandidateView& v) {
    return std::all_of(nodes.begin(), nodes.end(), [&](const std::string& n) { return v.has(n); });
  };
}

TEST(Reducer, ChainOfAThousandReachesTwoDistantNodesInFewChecks) {
  Model m = parse_model(testing::chain_model_text(1000));
  SyntheticTest t(m, needs({"n300", "n700"}));
  auto r = run(m, t);
  log_counts("chain 1000, {n300, n700}", r);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n300", "n700"}));
  EXPECT_TRUE(r.one_minimal);
  EXPECT_LT(r.checks - r.cache_hits, 200u);
}

TEST(Reducer, ChainOfAThousandReachesAdjacentPairWithCutsAlone) {
  Model m = parse_model(testing::chain_model_text(1000));
  SyntheticTest t(m, needs({"n500", "n501"}));
  auto r = run(m, t);
  log_counts("chain 1000, {n500, n501}", r);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n500", "n501"}));
  EXPECT_TRUE(r.one_minimal);
  EXPECT_LT(r.checks - r.cache_hits, 60u);
}

TEST(Reducer, KeepsTwoNodesAndTheOutputOfAThird) {
  Model m = parse_model(testing::residual_model_text(20));
  // Interesting iff a3 and b9 are kept and t7's value is an output of the candidate model.
  SyntheticTest t(m, [](const CandidateView& v) { return v.has("a3") && v.has("b9") && v.outputs_has("t7"); });
  auto r = run(m, t);
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
  auto r = run(m, t);
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
  auto r = run(m, t);
  log_counts("chain 200, fusion n90-n92", r);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n90", "n91", "n92"}));
  EXPECT_TRUE(r.one_minimal);
  EXPECT_LT(r.checks - r.cache_hits, 80u);
}

TEST(Reducer, FirstDivergenceFindsTheFailingNodeWhenOutputsCanBeMarked) {
  Model m = parse_model(testing::residual_model_text(30));
  // Layerwise failure: b17's value is wrong, and so is every value computed from it.
  SyntheticTest t(m, [](const CandidateView& v) {
    if (!v.has("b17")) return false;
    for (const auto& o : v.outputs)
      if (o == "b17" || (o[0] == 'h' && std::stoi(o.substr(1)) >= 17)) return true;
    return false;
  });
  ReduceOptions opts;
  opts.passes = select_passes({"first-divergence", "certify"}).value();
  auto r = run(m, t, opts);
  log_counts("residual 30, first divergence at b17", r);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"b17"}));
  EXPECT_EQ(r.best.outputs, (std::vector<std::string>{"b17"}));
}

TEST(Reducer, FirstDivergenceGoesStraightToTheFirstValueTheTestReportsWrong) {
  Model m = parse_model(testing::residual_model_text(30));
  auto wrong = [](const std::string& o) { return o == "b17" || (o[0] == 'h' && std::stoi(o.substr(1)) >= 17); };
  SyntheticTest t(m, [&](const CandidateView& v) {
    return v.has("b17") && std::any_of(v.outputs.begin(), v.outputs.end(), wrong);
  });
  t.failing_outputs = wrong;
  ReduceOptions opts;
  opts.passes = select_passes({"first-divergence"}).value();
  auto r = run(m, t, opts);
  EXPECT_EQ(r.best.outputs, (std::vector<std::string>{"b17"}));
  // The fully marked model, the prefix ending at b17, b17 with its ancestors (no bisection); round
  // 2 does not start the pass again on the node set it ended on.
  EXPECT_EQ(t.calls, 3u);
  // The same at every -j (the reported values arrive with the answer they belong to).
  for (int jobs : {2, 8}) {
    SyntheticTest tj(m, [&](const CandidateView& v) {
      return v.has("b17") && std::any_of(v.outputs.begin(), v.outputs.end(), wrong);
    }, 2);
    tj.failing_outputs = wrong;
    ReduceOptions o = opts;
    o.jobs = jobs;
    EXPECT_EQ(run(m, tj, o).best, r.best) << jobs;
  }
}

TEST(Reducer, FirstDivergenceBisectsOnceTheFirstReportedValueDoesNotFailAlone) {
  Model m = parse_model(testing::residual_model_text(30));
  // An input-wide failure (inputs bound in the wrong order): the check reports every value wrong,
  // but a prefix fails only once it reaches b17. After the first hinted prefix passes, the hint
  // says nothing more: bisection of the remaining prefixes, not a gallop betting on a small answer.
  SyntheticTest t(m, [](const CandidateView& v) { return v.has("b17") && !v.outputs.empty(); });
  t.failing_outputs = [](const std::string&) { return true; };
  ReduceOptions opts;
  opts.passes = select_passes({"first-divergence"}).value();
  auto r = run(m, t, opts);
  EXPECT_TRUE(std::count(r.best.outputs.begin(), r.best.outputs.end(), "b17")) << ::testing::PrintToString(r.best.outputs);
  // The fully marked model, the first hinted prefix, a bisection of the rest, the narrowed node.
  const size_t units = m.graph.nodes.size();
  size_t log2_units = 0;
  while ((size_t{1} << log2_units) < units) ++log2_units;
  EXPECT_LE(t.calls, 3 + log2_units) << units << " units";
}

TEST(Reducer, FirstDivergenceLooksWhereErrorIsBornNotAtValuesThatOnlyInheritIt) {
  // Inputs bound in the wrong order: n0 (reading x) and everything after it are wrong, and so is
  // s = Sub(y, z), which reads two graph inputs. Only s fails on its own; the error of n1..n39 is
  // n0's, inherited. The hint goes from n0 straight to s, the next value whose inputs are right.
  std::string text = "<ir_version: 8, opset_import: [\"\" : 17]>\nbind (float[2, 8] x, float[2, 8] y, float[2, 8] z) => (float[2, 8] out) {\n";
  for (int i = 0; i < 40; ++i) text += "  n" + std::to_string(i) + " = Relu(" + (i == 0 ? std::string("x") : "n" + std::to_string(i - 1)) + ")\n";
  text += "  s = Sub(y, z)\n  out = Add(n39, s)\n}\n";
  Model m = parse_model(text);
  SyntheticTest t(m, [](const CandidateView& v) { return v.has("s") && !v.outputs.empty(); });
  t.failing_outputs = [](const std::string&) { return true; };
  ReduceOptions opts;
  opts.passes = select_passes({"first-divergence"}).value();
  auto r = run(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"s"}));
  // The fully marked model, the prefix to n0 (passes), the prefix to s (fails), s alone: a
  // bisection over the 40 positions between them took 6 more.
  EXPECT_EQ(t.calls, 4u);
}

TEST(Reducer, OutputCutDoesNotSearchAgainWithinTheNodeItCutTo) {
  // A fused pattern of seven nodes (n3..n9 of a chain of 12). Output-cut bisects to n9 and its
  // ancestors, showing that no earlier node's ancestors fail; input-cut then drops n0..n2. The
  // second round does not ask output-cut again about earlier nodes of n3..n9: they are within
  // what failed to fail already (input-cut's probes are answered from the cache).
  Model m = parse_model(testing::chain_model_text(12));
  SyntheticTest t(m, needs({"n3", "n4", "n5", "n6", "n7", "n8", "n9"}));
  ReduceOptions opts;
  opts.passes = select_passes({"output-cut", "input-cut"}).value();
  auto r = run(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n3", "n4", "n5", "n6", "n7", "n8", "n9"}));
  // Round one's bisection and gallop; round two asks nothing new (10 when output-cut searched
  // n3..n9 again).
  EXPECT_EQ(t.calls, 8u);
}

TEST(Reducer, WhenMarkingOutputsHidesTheFailureTheCutsDoNotTryOneNodeAlone) {
  // A fusion of n3..n9 (in a chain of 12) that marking intermediate values breaks: a fused
  // pattern is several nodes. Output-cut does not bisect over n0 (it reads no other node: alone);
  // input-cut does not try n9 alone, and on these few units bisects instead of galloping from the
  // smallest suffix.
  Model m = parse_model(testing::chain_model_text(12));
  auto fused = needs({"n3", "n4", "n5", "n6", "n7", "n8", "n9"});
  SyntheticTest t(m, [&](const CandidateView& v) { return v.outputs.size() == 1 && fused(v); });
  ReduceOptions opts;
  opts.passes = select_passes({"first-divergence", "output-cut", "input-cut"}).value();
  auto r = run(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n3", "n4", "n5", "n6", "n7", "n8", "n9"}));
  // The fully marked model; 3 bisection probes over the sinks n1..n11; 3 over the suffixes of 2
  // to 10 nodes; the second round's input-cut is answered from the cache (9 checks before).
  EXPECT_EQ(t.calls, 7u);
}

TEST(Reducer, WhenMarkingOutputsHidesTheFailureOutputCutTriesOnlyNodesThatCanEndAFusion) {
  // Residual blocks h{i} = Add(h{i-1}, Neg(Relu(h{i-1}))) (a{i}, b{i}, h{i}); an engine fuses block
  // 3 unless one of its inner values (a3, b3) is an output. A fusion only takes values nothing
  // outside it reads: its node before the last reads into the last alone. No a{i} has such a
  // predecessor (h{i-1} is read by the Add too), so output-cut bisects over the 16 b{i} and h{i}
  // rather than the 23 nodes that read another node.
  Model m = parse_model(testing::residual_model_text(8, /*side_outputs=*/false));
  auto block = needs({"a3", "b3", "h3"});
  SyntheticTest t(m, [&](const CandidateView& v) { return block(v) && !v.outputs_has("a3") && !v.outputs_has("b3"); });
  ReduceOptions opts;
  opts.passes = select_passes({"first-divergence", "output-cut"}).value();
  auto r = run(m, t, opts);
  std::set<std::string> upstream;
  for (int i = 0; i <= 3; ++i)
    for (const char* n : {"a", "b", "h"}) upstream.insert(n + std::to_string(i));
  EXPECT_EQ(kept_names(m, r.best), upstream);
  // The fully marked model, then 4 bisection probes (b4, b2, b3, h3): 5 over the 23 nodes.
  EXPECT_EQ(t.calls, 5u);
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
  const auto expected = run(m, sequential);
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

TEST(Reducer, NodeRemovalStartsFromWhatEarlierPassesLearnedAboutNeededNodes) {
  Model m = parse_model(testing::chain_model_text(1000));
  // Two distant nodes are needed. first-divergence and input-cut find them at the ends of the
  // kept range; node-removal must then drop the 399 nodes between them. Its predictor reads the
  // cuts' answers (removing either end loses the failure), so its first windows already expect
  // every chunk holding an end to fail and every other chunk to go: 3 round trips (8 when it
  // learns only from its own answers).
  auto pred = needs({"n300", "n700"});
  SyntheticTest sequential(m, pred);
  const auto expected = run(m, sequential);
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
    auto r = run(m, t, opts);
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
    auto r = run(m, t, opts);
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
    auto r = run(m, t, opts);
    log_counts("chain 120 slow -j " + std::to_string(jobs), r);
    EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n10", "n70", "n71"}));
    if (!first) first = r.best;
    else EXPECT_EQ(r.best, *first);
  }
}

TEST(Reducer, BaselinesReachTheMinimumOnAChain) {
  Model m = parse_model(testing::chain_model_text(300));
  for (const char* strategy : {"polygraphy-bisect", "polygraphy-linear", "ddmin"}) {
    std::optional<Candidate> first;
    for (int jobs : {1, 3}) {
      SyntheticTest t(m, needs({"n120", "n121", "n122"}));
      ReduceOptions opts;
      opts.strategy = strategy;
      opts.jobs = jobs;
      auto r = run(m, t, opts);
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
  auto def = run(m, t1);
  ReduceOptions opts;
  opts.strategy = "ddmin";
  auto dd = run(m, t2, opts);
  log_counts("residual 12 default", def);
  log_counts("residual 12 ddmin", dd);
  EXPECT_EQ(kept_names(m, dd.best), kept_names(m, def.best));
  EXPECT_TRUE(dd.one_minimal);
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
  auto r = run(m, t, opts);
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
  auto r = run(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n40"}));
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), r.best);
  for (const auto& c : seen)
    for (size_t n : c.nodes) EXPECT_TRUE(n >= 30 && n < 60);
}

TEST(Reducer, CutValuesAreFrozenWhenTheFailureNeedsConstants) {
  Model m = parse_model(testing::chain_model_text(50));
  // n20 fails only when its input is a constant, once n19 is gone.
  SyntheticTest t(m, [](const CandidateView& v) { return v.has("n20") && (v.has("n19") || !v.inputs.count("n19")); });
  auto r = run(m, t);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n20"}));
  EXPECT_EQ(r.best.frozen, (std::vector<std::string>{"n19"}));
}

const char* kWeighted = R"(
<ir_version: 8, opset_import: ["" : 17]>
weighted (float[2, 2] x) => (float[2, 2] y)
<float[2, 2] w = {1.0, 2.0, 3.0, 4.0}, float[2, 2] b = {0.5, 0.5, 0.5, 0.5}>
{
  m = MatMul(x, w)
  t = Transpose<perm = [1, 0]>(m)
  a = Add(t, b)
  y = LeakyRelu<alpha = 0.2>(a)
}
)";

TEST(Reducer, WeightsTheFailureDoesNotNeedAreFilledWithZeros) {
  Model m = parse_model(kWeighted);
  SyntheticTest t(m, needs({"m", "t", "a", "y"}));
  auto r = run(m, t);
  EXPECT_EQ(r.best.filled, (std::map<std::string, double, std::less<>>{{"b", 0.0}, {"w", 0.0}}));
}

TEST(Reducer, WeightsAreFilledWithOnesWhenZerosSilenceTheFailureAndKeptWhenTheirValuesMatter) {
  Model m = parse_model(kWeighted);
  // w must not be zero; b's values matter.
  SyntheticTest t(m, [](const CandidateView& v) {
    const auto& f = v.candidate.filled;
    return v.has("m") && v.has("t") && v.has("a") && !f.count("b") && !(f.count("w") && f.at("w") == 0.0);
  });
  auto r = run(m, t);
  EXPECT_EQ(r.best.filled, (std::map<std::string, double, std::less<>>{{"w", 1.0}}));
}

TEST(Reducer, SimplificationsSpendAtMostTheirEngineRunsAndTheNodeSetIsStillCertified) {
  Model m = parse_model(kWeighted);
  // Every weight can be filled and every attribute dropped: unlimited, the simplification
  // passes commit all of it.
  auto all_four = needs({"m", "t", "a", "y"});
  SyntheticTest unlimited(m, all_four);
  auto full = run(m, unlimited);
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
  auto r = run(m, bounded, opts);
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
  auto again = run(m, resumed, opts);
  EXPECT_EQ(again.simplify_runs, 1u);
  EXPECT_TRUE(again.best.input_shapes.empty());
  EXPECT_TRUE(again.simplify_budget_reached);
  opts.start.reset();
  opts.simplify_runs_spent = 0;
  // No run at all: the model is kept as it is, and still certified.
  SyntheticTest none(m, all_four);
  opts.simplify_runs = 0;
  auto z = run(m, none, opts);
  EXPECT_EQ(z.simplify_runs, 0u);
  EXPECT_TRUE(z.best.filled.empty());
  EXPECT_TRUE(z.one_minimal);
}

TEST(Reducer, CertifyDoesNotAskAgainARemovalTheSearchAlreadyAnswered) {
  Model m = parse_model(testing::chain_model_text(8));
  // The failure needs n4..n7. input-cut's search keeps the last 1, 2, 4 (interesting) and 3
  // nodes: the last is the candidate without n4, which is certify's first single removal.
  SyntheticTest t(m, needs({"n4", "n5", "n6", "n7"}));
  ReduceOptions opts;
  opts.passes = select_passes({"input-cut", "certify"}).value();
  auto r = run(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n4", "n5", "n6", "n7"}));
  EXPECT_TRUE(r.one_minimal);
  // input-cut's 4 probes and 3 of certify's 4 removals: the known verdict is read, not asked again.
  EXPECT_EQ(t.calls, 4u + 3u);
}

TEST(Reducer, OnAFewNodesNodeRemovalLeavesTheSinglesToCertify) {
  Model m = parse_model(testing::chain_model_text(6));
  // Every node is needed: the candidate is 1-minimal from the start. Each single removal is
  // asked once (certify); no group of node-removal's is asked on top.
  SyntheticTest t(m, needs({"n0", "n1", "n2", "n3", "n4", "n5"}));
  ReduceOptions opts;
  opts.passes = select_passes({"node-removal", "certify"}).value();
  auto r = run(m, t, opts);
  EXPECT_TRUE(r.one_minimal);
  EXPECT_EQ(r.best.nodes.size(), m.graph.nodes.size());
  EXPECT_EQ(t.calls, m.graph.nodes.size());
}

TEST(Reducer, AttributesTheFailureDoesNotNeedAreDropped) {
  Model m = parse_model(kWeighted);
  const size_t transpose = 1, leaky = 3;
  // The failure needs the transposition (dropping perm would reverse dims anyway, but say it
  // changes the failure) and not LeakyRelu's slope.
  SyntheticTest t(m, [&](const CandidateView& v) {
    const auto& d = v.candidate.dropped_attributes;
    return v.has("t") && v.has("y") && std::find(d.begin(), d.end(), std::make_pair(transpose, std::string("perm"))) == d.end();
  });
  auto r = run(m, t);
  EXPECT_EQ(r.best.dropped_attributes, (std::vector<std::pair<size_t, std::string>>{{leaky, "alpha"}}));
  EXPECT_TRUE(r.one_minimal);
}

TEST(Reducer, EditsThatFailOnlyInSmallerSetsAreAccumulatedInOnePass) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
slopes (float[2] x) => (float[2] c)
{
  a = LeakyRelu<alpha = 0.2>(x)
  b = LeakyRelu<alpha = 0.3>(a)
  c = LeakyRelu<alpha = 0.4>(b)
}
)");
  // Any one or two slopes may go back to the default, not all three.
  SyntheticTest t(m, [](const CandidateView& v) {
    return v.has("a") && v.has("b") && v.has("c") && v.candidate.dropped_attributes.size() <= 2;
  });
  ReduceOptions opts;
  opts.passes = select_passes({"drop-attributes"}).value();
  auto r = run(m, t, opts);
  // In order: the first two are accepted, the third would make three.
  EXPECT_EQ(r.best.dropped_attributes, (std::vector<std::pair<size_t, std::string>>{{0, "alpha"}, {1, "alpha"}}));
  // All three (1), the first (1), the first two (1): the set of all three is not asked again,
  // and no second round has anything new to test.
  EXPECT_EQ(t.calls, 3u);
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
  auto r = run(m, t, opts);
  EXPECT_TRUE(r.one_minimal);
  EXPECT_FALSE(r.best.filled.empty());
  size_t round_one = 0;
  for (const auto& line : lines)
    if (line.rfind("round 1 done: ", 0) == 0) round_one = std::stoul(line.substr(line.find(", ") + 2));
  ASSERT_GT(round_one, 0u) << "round 1 changed the candidate, so a round 2 ran";
  EXPECT_EQ(r.checks, round_one);
  EXPECT_EQ(t.calls, round_one - r.cache_hits);
}

// A failure that does not depend on sizes: every dim of every input goes to 1 in one check.
TEST(Reducer, ShapesTheFailureDoesNotNeedGoToOneInOneCheck) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
sizes (float[4, 8, 16] x, float[4, 8, 16] z) => (float[4, 8, 16] y)
{
  y = Add(x, z)
}
)");
  SyntheticTest t(m, needs({"y"}));
  ReduceOptions opts;
  opts.passes = select_passes({"shape-reduction"}).value();
  auto r = run(m, t, opts);
  EXPECT_EQ(r.best.input_shapes, (std::map<std::string, Shape, std::less<>>{{"x", {1, 1, 1}}, {"z", {1, 1, 1}}}));
  EXPECT_EQ(t.calls, 1u);
}

// The failure needs the last dim whole: after every dim at 1 and every dim halved (both refused),
// each dim is halved on its own until refused or 1, and a refused dim is never tried again.
TEST(Reducer, EachDimIsHalvedOnItsOwnAndARefusedDimIsNotTriedAgain) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
sizes (float[8, 8, 16] x) => (float[8, 8, 16] y)
{
  y = Relu(x)
}
)");
  SyntheticTest t(m, [](const CandidateView& v) {
    auto it = v.candidate.input_shapes.find("x");
    return v.has("y") && (it == v.candidate.input_shapes.end() || it->second[2] == 16);
  });
  ReduceOptions opts;
  opts.passes = select_passes({"shape-reduction"}).value();
  auto r = run(m, t, opts);
  EXPECT_EQ(r.best.input_shapes, (std::map<std::string, Shape, std::less<>>{{"x", {1, 1, 16}}}));
  // 2 refused (all at 1, all halved); the first two dims straight to 1; the last at 1 is the
  // candidate refused first (the cache answers), then its halvings are bisected: 4 and 8
  // refused. 6 checks (halving step by step took 9, scans from the first option 14).
  EXPECT_EQ(t.calls, 6u);
}

TEST(Reducer, ADimTheFailureNeedsSomeOfIsBisectedOverItsHalvings) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
sizes (float[8, 64] x) => (float[8, 64] y)
{
  y = Relu(x)
}
)");
  // The failure needs more than 4 columns and more than 1 row.
  SyntheticTest t(m, [](const CandidateView& v) {
    auto it = v.candidate.input_shapes.find("x");
    return v.has("y") && (it == v.candidate.input_shapes.end() || (it->second[0] > 1 && it->second[1] > 4));
  });
  ReduceOptions opts;
  opts.passes = select_passes({"shape-reduction"}).value();
  auto r = run(m, t, opts);
  EXPECT_EQ(r.best.input_shapes, (std::map<std::string, Shape, std::less<>>{{"x", {2, 8}}}));
  // all at 1 refused; all halved holds twice ([4,32], [2,16]), then refused ([1,8]); rows: 1
  // refused and nothing between; columns 16: 1 refused, then the halvings 8, 4, 2 bisected: 4
  // refused, 8 holds. 8 checks, where halving step by step took 7: trying 1 first costs a check
  // on a dim the failure needs some of, and saves one per halving on a dim it does not need.
  EXPECT_EQ(t.calls, 8u);
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

TEST(Reducer, WithoutCertifyTheResultIsNotClaimedOneMinimal) {
  Model m = parse_model(testing::chain_model_text(60));
  SyntheticTest t(m, needs({"n7", "n40"}));
  ReduceOptions opts;
  opts.passes = select_passes({}, {"certify"}).value();
  auto r = run(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n7", "n40"}));
  EXPECT_FALSE(r.one_minimal);
}

}  // namespace
}  // namespace reduce

namespace reduce {
namespace {

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
