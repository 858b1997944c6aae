// input-cut: the shortest failing suffix of a candidate, found by exponential search from the
// smallest, so a pattern of k units costs about 2 log2(k) checks however long the prefix.
#include <algorithm>
#include <functional>

#include <gtest/gtest.h>

#include "reducer/reducer.h"
#include "../synthetic_test.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace testing;

// Reduces `m` with `opts` on `fails`, checks that the result keeps `expected`, and returns the
// checks input-cut asked (the reduction's other checks are not counted).
size_t input_cut_checks_keeping(const Model& m, std::function<bool(const CandidateView&)> fails,
                                const std::vector<std::string>& expected, const ReduceOptions& opts) {
  SyntheticTest t(m, std::move(fails));
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), std::set<std::string>(expected.begin(), expected.end()));
  size_t checks = 0;
  for (const auto& p : r.passes)
    if (p.name == "input-cut") checks += p.checks;
  return checks;
}

// The checks input-cut, alone, asks to keep the last `needed` nodes of a chain of `length`.
size_t checks_to_keep_the_last(size_t length, size_t needed) {
  std::vector<std::string> names;
  for (size_t i = length - needed; i < length; ++i) names.push_back("n" + std::to_string(i));
  ReduceOptions opts;
  opts.passes = select_passes({"input-cut"}).value();
  return input_cut_checks_keeping(parse_model(testing::chain_model_text(length)), needs(names), names, opts);
}

TEST(Reducer, InputCutFindsASingleNodeOrAPairInOneOrTwoChecksWhateverTheLength) {
  EXPECT_EQ(checks_to_keep_the_last(58, 1), 1u);
  EXPECT_EQ(checks_to_keep_the_last(58, 2), 2u);
  EXPECT_EQ(checks_to_keep_the_last(150, 2), 2u);
}

TEST(Reducer, InputCutPaysForThePatternNotForThePrefixBeforeIt) {
  // A decomposed LayerNorm is 7 nodes: suffixes of 1, 2, 4 and 8 units, then 6 and 7 (a gallop
  // that stops doubling at sqrt(31) and bisects the rest asked 8).
  EXPECT_EQ(checks_to_keep_the_last(31, 7), 6u);
  // 9 nodes: 1, 2, 4, 8, 16, then 12, 10, 9; as many on 58 units as on 150.
  EXPECT_EQ(checks_to_keep_the_last(58, 9), 8u);
  EXPECT_EQ(checks_to_keep_the_last(150, 9), 8u);
}

TEST(Reducer, InputCutKeepsEverythingWhenNoSuffixFails) {
  // Only the whole chain fails: suffixes of 1, 2, 4, 8, 16 and 19 units pass, and with nothing
  // smaller failing the whole chain's own check is asked too (7).
  EXPECT_EQ(checks_to_keep_the_last(20, 20), 7u);
}

// A Relu chain n0..n19 whose n3 is also read by the last node (a residual): the first-divergence
// prefix ending at the fused pair (n10, n11) marks n11 and n3, what later nodes read.
Model chain_with_a_skip_from_n3() {
  std::string text = "<ir_version: 8, opset_import: [\"\" : 17]>\nskip (float[2, 8] x) => (float[2, 8] out) {\n";
  for (int i = 0; i < 20; ++i) text += "  n" + std::to_string(i) + " = Relu(" + (i == 0 ? std::string("x") : "n" + std::to_string(i - 1)) + ")\n";
  text += "  out = Add(n19, n3)\n}\n";
  return parse_model(text);
}

// The fused pair fails unless n10 is marked (marking it breaks the fusion); with `needs_n3_marked`,
// only when n3 is an output too.
std::function<bool(const CandidateView&)> fused_pair(bool needs_n3_marked) {
  return [=](const CandidateView& v) {
    return v.has("n10") && v.has("n11") && !v.outputs_has("n10") && !v.outputs.empty() &&
           (!needs_n3_marked || v.outputs_has("n3"));
  };
}

ReduceOptions first_divergence_to_input_cut() {
  ReduceOptions opts;
  opts.passes = select_passes({"first-divergence", "output-cut", "input-cut"}).value();
  return opts;
}

TEST(Reducer, InputCutNarrowsAFirstDivergencePrefixToTheDivergenceOutputsWithoutTestingItFirst) {
  Model m = chain_with_a_skip_from_n3();
  SyntheticTest t(m, fused_pair(false));
  const ReduceOptions opts = first_divergence_to_input_cut();
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n10", "n11"}));
  EXPECT_EQ(model_outputs(m, r.best), (std::vector<std::string>{"n11"}));
  size_t first_divergence = 0, input_cut = 0;
  for (const auto& p : r.passes) {
    if (p.name == "first-divergence") first_divergence += p.checks;
    if (p.name == "input-cut") input_cut += p.checks;
  }
  // The fully marked model and a bisection over the 18 fusion ends (5): n0..n11 with only n11 marked
  // is not tested on its own. input-cut asks the shortest fused suffix first, the pair: 1 (a
  // bisection over its 11 fused suffixes asked 4).
  EXPECT_EQ(first_divergence, 5u);
  EXPECT_EQ(input_cut, 1u);
  EXPECT_EQ(t.calls, first_divergence + input_cut);
  for (int jobs : {2, 8}) {
    SyntheticTest tj(m, fused_pair(false), 2);
    ReduceOptions o = opts;
    o.jobs = jobs;
    EXPECT_EQ(reduce_checked(m, tj, o).best, r.best) << jobs;
  }
}

TEST(Reducer, InputCutSearchesThePrefixAsItIsWhenTheDivergenceOutputsAloneDoNotFail) {
  // The failure shows only with n3 marked as well: no suffix marked with n11 alone fails, the
  // narrowed prefix either; the search starts again on the prefix with both outputs.
  Model m = chain_with_a_skip_from_n3();
  SyntheticTest t(m, fused_pair(true));
  auto r = reduce_checked(m, t, first_divergence_to_input_cut());
  std::set<std::string> kept;
  for (int i = 3; i <= 11; ++i) kept.insert("n" + std::to_string(i));
  EXPECT_EQ(kept_names(m, r.best), kept);
  const auto outputs = model_outputs(m, r.best);
  EXPECT_EQ(std::set<std::string>(outputs.begin(), outputs.end()), (std::set<std::string>{"n3", "n11"}));
}

// A decomposed LayerNorm (m, d, q, v, s, y) of h = Relu(n9), with a residual from n9 after it:
// h is read by the pattern's two first nodes only, so it is what could be fused into y too
// (ReductionGraph::fusion_closure), though the pattern reads it rather than holds it.
Model layer_norm_after_a_chain(bool residual) {
  std::string text = "<ir_version: 8, opset_import: [\"\" : 17]>\nln (float[2, 8] x) => (float[2, 8] out) {\n";
  for (int i = 0; i < 10; ++i) text += "  n" + std::to_string(i) + " = Relu(" + (i == 0 ? std::string("x") : "n" + std::to_string(i - 1)) + ")\n";
  text += "  h = Relu(n9)\n  m = ReduceMean<axes = [1]>(h)\n  d = Sub(h, m)\n  q = Mul(d, d)\n"
          "  v = ReduceMean<axes = [1]>(q)\n  s = Sqrt(v)\n  y = Div(d, s)\n";
  text += residual ? "  out = Add(y, n9)\n}\n" : "  out = Identity(y)\n}\n";
  return parse_model(text);
}

const std::vector<std::string> kLayerNorm = {"m", "d", "q", "v", "s", "y"};

// The pattern fails unless one of its inner values is marked (marking breaks the fusion).
bool fused_layer_norm(const CandidateView& v) {
  return needs(kLayerNorm)(v) &&
         std::none_of(kLayerNorm.begin(), kLayerNorm.end() - 1, [&](const std::string& n) { return v.outputs_has(n); });
}

TEST(Reducer, InputCutAsksWhatCouldBeFusedIntoTheLastNodeBeforeSearchingBetween) {
  // The closure of y is h..y (7 units: n9 is read by the residual too). Suffixes of 2 units
  // (s, y) and 4 pass; the next doubling (8) would step over the closure: 6, a unit short of it,
  // the pattern, fails; 5 passes: 4 checks, where the exponential search asked 5 (2, 4, 8, 6, 5).
  Model m = layer_norm_after_a_chain(true);
  EXPECT_EQ(input_cut_checks_keeping(m, fused_layer_norm, kLayerNorm, first_divergence_to_input_cut()), 4u);
  SyntheticTest t(m, fused_layer_norm);
  const Candidate at_one = reduce_checked(m, t, first_divergence_to_input_cut()).best;
  for (int jobs : {2, 8}) {
    SyntheticTest tj(m, fused_layer_norm, 2);
    ReduceOptions o = first_divergence_to_input_cut();
    o.jobs = jobs;
    EXPECT_EQ(reduce_checked(m, tj, o).best, at_one) << jobs;
  }
}

TEST(Reducer, InputCutSearchesBeyondTheFusionClosureWhenItPasses) {
  // Only the pattern with n7..n9 fails, beyond what could be fused into y: the closure's suffixes
  // pass, and the search goes on above them to the right answer.
  std::vector<std::string> needed = kLayerNorm;
  needed.insert(needed.end(), {"n7", "n8", "n9", "h"});
  auto wider = [&](const CandidateView& v) { return fused_layer_norm(v) && needs(needed)(v); };
  input_cut_checks_keeping(layer_norm_after_a_chain(true), wider, needed, first_divergence_to_input_cut());
}

TEST(Reducer, InputCutFindsASmallFusionInsideALargeClosureAsWithoutOne) {
  // A fusion of the last three nodes (v, s, y) inside the closure h..y: 2 units pass, 4 fail,
  // 3 fail: the closure is never asked, as the exponential search would not.
  const std::vector<std::string> tail = {"v", "s", "y"};
  auto fused_tail = [&](const CandidateView& v) { return needs(tail)(v) && !v.outputs_has("v") && !v.outputs_has("s"); };
  EXPECT_EQ(input_cut_checks_keeping(layer_norm_after_a_chain(true), fused_tail, tail, first_divergence_to_input_cut()), 3u);
}

TEST(Reducer, InputCutWithoutAClosureToGoOnSearchesExponentially) {
  // Without the residual, everything before y feeds it alone: the closure is the whole candidate
  // and says nothing. Suffixes of 2, 4, 8 (fails), 6, 7 units, as the exponential search asks.
  EXPECT_EQ(input_cut_checks_keeping(layer_norm_after_a_chain(false), fused_layer_norm, kLayerNorm,
                                     first_divergence_to_input_cut()), 5u);
}

}  // namespace
}  // namespace reduce
