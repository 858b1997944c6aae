// first-divergence: marking intermediate outputs and bisecting the topological order for the first
// failing node, led by the values the test reports wrong.
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
  auto r = reduce_checked(m, t, opts);
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
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"s"}));
  // The fully marked model, the prefix to n0 (passes), the prefix to s (fails), s alone: a
  // bisection over the 40 positions between them took 6 more.
  EXPECT_EQ(t.calls, 4u);
}

}  // namespace
}  // namespace reduce
