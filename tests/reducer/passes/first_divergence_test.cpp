// first-divergence: marking intermediate outputs and bisecting the topological order for the first
// failing node, led by the values the test reports wrong.
#include <functional>

#include <gtest/gtest.h>

#include "reducer/reducer.h"
#include "../synthetic_test.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace testing;

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
  auto r = reduce_checked(m, t, opts);
  log_counts("residual 30, first divergence at b17", r);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"b17"}));
  EXPECT_EQ(model_outputs(m, r.best), (std::vector<std::string>{"b17"}));
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
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(model_outputs(m, r.best), (std::vector<std::string>{"b17"}));
  // The fully marked model, then b17 alone (it fails: the prefix ending at it is never built, nor
  // b17 with its ancestors); round 2 does not start the pass again on the node set it ended on.
  EXPECT_EQ(t.calls, 2u);
  // The same at every -j (the reported values arrive with the answer they belong to).
  for (int jobs : {2, 8}) {
    SyntheticTest tj(m, [&](const CandidateView& v) {
      return v.has("b17") && std::any_of(v.outputs.begin(), v.outputs.end(), wrong);
    }, 2);
    tj.failing_outputs = wrong;
    ReduceOptions o = opts;
    o.jobs = jobs;
    EXPECT_EQ(reduce_checked(m, tj, o).best, r.best) << jobs;
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
  auto r = reduce_checked(m, t, opts);
  const auto outputs = model_outputs(m, r.best);
  EXPECT_TRUE(std::count(outputs.begin(), outputs.end(), "b17")) << ::testing::PrintToString(outputs);
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
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"s"}));
  // The fully marked model, the prefix to n0 (passes), the prefix to s (fails), s alone: a
  // bisection over the 40 positions between them took 6 more.
  EXPECT_EQ(t.calls, 4u);
}

// Residual blocks h{i} = Add(h{i-1}, Neg(Relu(h{i-1}))) (a{i}, b{i}, h{i}); an engine fuses block 3
// unless one of its inner values (a3, b3) is an output, and the fused block computes a wrong h3.
std::function<bool(const CandidateView&)> fused_block_3(bool gate_hides_it) {
  const auto block = needs({"a3", "b3", "h3"});
  return [=](const CandidateView& v) {
    if (!block(v) || v.outputs_has("a3") || v.outputs_has("b3")) return false;
    // Each later block's Relu gate passes none of h3's error on: a{i}, b{i} (i > 3) are right, the
    // residual h{i} carries it.
    for (const auto& o : v.outputs)
      if (o[0] == 'h' || !gate_hides_it) return true;
    return false;
  };
}

// Block 3 with everything upstream of it: what the searches below should keep.
std::set<std::string> through_block_3() {
  std::set<std::string> upstream;
  for (int i = 0; i <= 3; ++i)
    for (const char* n : {"a", "b", "h"}) upstream.insert(n + std::to_string(i));
  return upstream;
}

ReduceOptions first_divergence_and_output_cut() {
  ReduceOptions opts;
  opts.passes = select_passes({"first-divergence", "output-cut"}).value();
  return opts;
}

TEST(Reducer, WhenMarkingOutputsHidesTheFailureThePrefixesShowOnlyWhatTheRestReads) {
  // The fully marked model passes (a3, b3 marked break the fusion). Prefixes marked with only
  // the values later nodes read keep every fusion within them: the first failing one ends at h3.
  // Only nodes that can end a fusion are bisected over: a fusion only takes values nothing outside
  // it reads, so its node before the last reads into the last alone. No a{i} has such a predecessor
  // (h{i-1} is read by the Add too): 15 positions (the b{i} and h{i} but the last) and not 23.
  Model m = parse_model(testing::residual_model_text(8, /*side_outputs=*/false));
  SyntheticTest t(m, fused_block_3(false));
  auto r = reduce_checked(m, t, first_divergence_and_output_cut());
  EXPECT_EQ(kept_names(m, r.best), through_block_3());
  EXPECT_EQ(model_outputs(m, r.best), (std::vector<std::string>{"h3"}));
  // The fully marked model, then 4 bisection probes (h3's prefix is h3 with its ancestors: no
  // narrowing probe); output-cut has nothing left to find.
  EXPECT_EQ(t.calls, 5u);
}

TEST(Reducer, WhenMarkingOutputsHidesTheFailureALaterGateThatHidesTheErrorDoesNotMisleadTheSearch) {
  // As above, but the error reaches only the residual values: a later block's b{i} alone shows
  // nothing. A search over single nodes' ancestors is not monotone here (b4's ancestors pass, h3's
  // fail); a prefix shows what its later nodes read, h{i} among it, and fails from h3 on.
  Model m = parse_model(testing::residual_model_text(8, /*side_outputs=*/false));
  SyntheticTest t(m, fused_block_3(true));
  const ReduceOptions opts = first_divergence_and_output_cut();
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), through_block_3());
  EXPECT_EQ(t.calls, 5u);
  // The same at every -j.
  for (int jobs : {2, 8}) {
    SyntheticTest tj(m, fused_block_3(true), 2);
    ReduceOptions o = opts;
    o.jobs = jobs;
    EXPECT_EQ(reduce_checked(m, tj, o).best, r.best) << jobs;
  }
}

TEST(Reducer, FirstDivergenceWhosePrefixFailsOnlyAsAWholeLeavesOutputCutNothingToTry) {
  // Inputs bound in the wrong order: a candidate fails once it reads both x and y. The first
  // failing prefix ends at the first node reading y, whose own ancestors do not read x: the
  // narrowed candidate passes and the prefix is kept. Output-cut would try single nodes' ancestors
  // within it, each of which the bisection or the narrowing already showed passing: it asks nothing.
  std::string text = "<ir_version: 8, opset_import: [\"\" : 17]>\nbind (float[2, 8] x, float[2, 8] y) => (float[2, 8] out) {\n";
  for (int i = 0; i < 10; ++i) text += "  n" + std::to_string(i) + " = Relu(" + (i == 0 ? std::string("x") : "n" + std::to_string(i - 1)) + ")\n";
  text += "  s = Neg(y)\n  t = Add(s, n5)\n  out = Add(n9, t)\n}\n";
  Model m = parse_model(text);
  SyntheticTest t(m, [](const CandidateView& v) { return v.has("s") && v.has("n0") && !v.outputs.empty(); });
  auto r = reduce_checked(m, t, first_divergence_and_output_cut());
  EXPECT_TRUE(kept_names(m, r.best).count("s"));
  EXPECT_TRUE(kept_names(m, r.best).count("n0"));
  for (const auto& p : r.passes)
    if (p.name == "output-cut") {
      EXPECT_EQ(p.checks, 0u);
    }
}

TEST(Reducer, AModelIsTestedOnceWhicheverPassSpellsItsOutputs) {
  // A prefix with its one output marked is the model a removal leaves with the default outputs:
  // first-divergence's prefixes, input-cut's suffixes and certify's removals share one verdict.
  // And on a pair, first-divergence's only smaller prefix is certify's removal of the second node:
  // a later round does not ask the pair with both outputs marked either.
  Model chain = parse_model(testing::chain_model_text(20));
  Model residual = parse_model(testing::residual_model_text(30));
  auto wrong = [](const std::string& o) { return o == "b17" || (o[0] == 'h' && std::stoi(o.substr(1)) >= 17); };
  for (int jobs : {1, 4}) {
    ReduceOptions opts;
    opts.jobs = jobs;
    std::atomic<size_t> pair_marked{0};
    SyntheticTest pair(chain, [&](const CandidateView& v) {
      if (v.kept.size() == 2 && v.outputs.size() == 2) ++pair_marked;
      return v.has("n10") && v.has("n11");
    });
    auto r = reduce_checked(chain, pair, opts);
    EXPECT_EQ(kept_names(chain, r.best), (std::set<std::string>{"n10", "n11"}));
    EXPECT_EQ(pair.repeated, 0u) << jobs;
    EXPECT_EQ(pair_marked, 0u) << jobs;
    SyntheticTest diverging(residual, [&](const CandidateView& v) {
      return v.has("b17") && std::any_of(v.outputs.begin(), v.outputs.end(), wrong);
    });
    diverging.failing_outputs = wrong;
    r = reduce_checked(residual, diverging, opts);
    EXPECT_EQ(kept_names(residual, r.best), (std::set<std::string>{"b17"}));
    EXPECT_EQ(diverging.repeated, 0u) << jobs;
  }
}

TEST(Reducer, FirstDivergenceTriesTheDivergingNodeAloneBeforeItsAncestors) {
  // b17's value is wrong, and so is every value computed from it. The node alone (its input cut)
  // fails already: b17 with its 51 ancestors and only its own output is never checked. When the
  // failure needs the node's input computed (a17 too), the node alone passes and the narrowed
  // candidate is checked next; input-cut's first suffix is the node alone again, answered from
  // the cache: no model is checked twice. (Candidates of two nodes are input-cut's suffixes.)
  Model m = parse_model(testing::residual_model_text(30));
  auto wrong = [](const std::set<std::string>& outputs) {
    for (const auto& o : outputs)
      if (o == "b17" || (o[0] == 'h' && std::stoi(o.substr(1)) >= 17)) return true;
    return false;
  };
  for (bool needs_input : {false, true}) {
    for (int jobs : {1, 4}) {
      std::atomic<size_t> alone{0}, narrowed{0};
      SyntheticTest t(m, [&](const CandidateView& v) {
        if (v.outputs == std::set<std::string>{"b17"} && v.kept.size() != 2) ++(v.kept.size() == 1 ? alone : narrowed);
        return v.has("b17") && (!needs_input || v.has("a17")) && wrong(v.outputs);
      });
      ReduceOptions opts;
      opts.jobs = jobs;
      opts.passes = select_passes({"first-divergence", "input-cut", "certify"}).value();
      auto r = reduce_checked(m, t, opts);
      const std::set<std::string> expected = needs_input ? std::set<std::string>{"a17", "b17"} : std::set<std::string>{"b17"};
      EXPECT_EQ(kept_names(m, r.best), expected) << jobs;
      EXPECT_EQ(t.repeated, 0u) << jobs;
      EXPECT_EQ(alone, 1u) << needs_input << " " << jobs;
      if (jobs == 1) {
        EXPECT_EQ(narrowed, needs_input ? 1u : 0u) << needs_input;
      }
    }
  }
}

// Whether `o` is b{k}, or h{i} with i >= k: what is wrong when block k's Neg is.
bool wrong_from_block(const std::string& o, int k) {
  return o == "b" + std::to_string(k) || (o[0] == 'h' && std::stoi(o.substr(1)) >= k);
}

TEST(Reducer, FirstDivergenceCandidatesShrinkFromBothEnds) {
  // 400 residual blocks (1 200 nodes), b300's value wrong (a crash would do: no values reported,
  // so the prefixes are bisected). Once a prefix is known to pass, the next candidates start after
  // it, its values cut: the engine is given about the model's size over the whole search, where
  // log2(1 200) prefixes ending near b300 gave it 8 times that.
  Model m = parse_model(testing::residual_model_text(400, /*side_outputs=*/false));
  const size_t nodes = m.graph.nodes.size();
  for (int jobs : {1, 4}) {
    std::atomic<size_t> work{0};
    SyntheticTest t(m, [&](const CandidateView& v) {
      work += v.kept.size();
      return v.has("b300") && std::any_of(v.outputs.begin(), v.outputs.end(), [](const std::string& o) { return wrong_from_block(o, 300); });
    });
    ReduceOptions opts;
    opts.jobs = jobs;
    opts.passes = select_passes({"first-divergence", "input-cut", "certify"}).value();
    auto r = reduce_checked(m, t, opts);
    EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"b300"})) << jobs;
    // The fully marked model (1x), windows halving (about 1x), and the model's own prefix ending at
    // b300 (3/4), which shows the last window's failure is the model's, not its cut's.
    if (jobs == 1) {
      EXPECT_LE(work, 3 * nodes) << t.calls << " checks";
    }
  }
}

TEST(Reducer, FirstDivergenceWindowsKeepWhatCouldBeFusedAcrossTheirCut) {
  // As WhenMarkingOutputsHidesTheFailure..., on 400 blocks with block 300 fused: a window starting
  // inside block 300 takes the units before it that could be fused into it (fusion_extension), so
  // the windows still find it, and the work stays near the model's size.
  Model m = parse_model(testing::residual_model_text(400, /*side_outputs=*/false));
  const size_t nodes = m.graph.nodes.size();
  const auto block = needs({"a300", "b300", "h300"});
  std::atomic<size_t> work{0};
  SyntheticTest t(m, [&](const CandidateView& v) {
    work += v.kept.size();
    if (!block(v) || v.outputs_has("a300") || v.outputs_has("b300")) return false;
    return std::any_of(v.outputs.begin(), v.outputs.end(), [](const std::string& o) { return o[0] == 'h'; });
  });
  ReduceOptions opts;
  opts.passes = select_passes({"first-divergence", "input-cut", "certify"}).value();
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"a300", "b300", "h300"}));
  // As above, and each window takes up to 64 units before its cut.
  EXPECT_LE(work, 3 * nodes + 64 * t.calls) << t.calls << " checks";
}

TEST(Reducer, AWindowThatFailsOnlyForItsCutIsCaughtByTheModelsOwnPrefix) {
  // The model's own prefixes fail from b200 on. b160 fails whenever it reads a cut value (as an
  // engine fails on a value it would have computed at build time, given as an input): the windows
  // lead the bisection there. The model's prefix ending at b160 passes, so that failure is the
  // cut's: the search starts again over prefixes and ends at b200, as without windows.
  Model m = parse_model(testing::residual_model_text(300, /*side_outputs=*/false));
  for (int jobs : {1, 4}) {
    std::atomic<size_t> artifacts{0};
    SyntheticTest t(m, [&](const CandidateView& v) {
      const bool cut = std::any_of(v.inputs.begin(), v.inputs.end(), [](const std::string& i) { return i != "x"; });
      if (cut && v.has("b160") && !v.has("b200")) return ++artifacts, true;
      return v.has("b200") && std::any_of(v.outputs.begin(), v.outputs.end(), [](const std::string& o) { return wrong_from_block(o, 200); });
    });
    ReduceOptions opts;
    opts.jobs = jobs;
    opts.passes = select_passes({"first-divergence", "certify"}).value();
    auto r = reduce_checked(m, t, opts);
    EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"b200"})) << jobs;
    if (jobs == 1) {
      EXPECT_GT(artifacts, 0u) << "the windows did reach b160";
    }
  }
}

TEST(Reducer, FirstDivergenceBisectsPrefixesAgainWhenNoWindowFails) {
  // A failure that needs the front's own values (inputs bound in the wrong order: a candidate fails
  // once it reads x through n0 and reaches n200): every window passes, its front cut. The bisection
  // runs again over prefixes and finds n200, as without windows.
  Model m = parse_model(testing::chain_model_text(300));
  SyntheticTest t(m, [](const CandidateView& v) {
    if (!v.has("n0") || !v.has("n200")) return false;
    return std::any_of(v.outputs.begin(), v.outputs.end(), [](const std::string& o) { return std::stoi(o.substr(1)) >= 200; });
  });
  ReduceOptions opts;
  opts.passes = select_passes({"first-divergence"}).value();
  auto r = reduce_checked(m, t, opts);
  // The prefix ending at n200 (its outputs marked: input-cut's suffixes mark n200's alone).
  EXPECT_EQ(r.best.nodes.size(), 201u);
  EXPECT_EQ(model_outputs(m, r.best).back(), "n200");
  // The fully marked model, two bisections of 299 positions (9 each), n200 alone.
  EXPECT_LE(t.calls, 1u + 2 * 9 + 1);
}

}  // namespace
}  // namespace reduce
