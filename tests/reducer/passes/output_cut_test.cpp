// output-cut (and input-cut after it): keeping the ancestors of one node, found by bisection on
// topological position, without asking again what an earlier cut answered.
#include <gtest/gtest.h>

#include "reducer/reducer.h"
#include "../synthetic_test.h"
#include "test_support.h"

namespace reduce {
namespace {

using namespace testing;

TEST(Reducer, OutputCutDoesNotSearchAgainWithinTheNodeItCutTo) {
  // A fused pattern of seven nodes (n3..n9 of a chain of 12). Output-cut bisects to n9 and its
  // ancestors, showing that no earlier node's ancestors fail; input-cut then drops n0..n2. The
  // second round does not ask output-cut again about earlier nodes of n3..n9: they are within
  // what failed to fail already (input-cut's probes are answered from the cache).
  Model m = parse_model(testing::chain_model_text(12));
  SyntheticTest t(m, needs({"n3", "n4", "n5", "n6", "n7", "n8", "n9"}));
  ReduceOptions opts;
  opts.passes = select_passes({"output-cut", "input-cut"}).value();
  auto r = reduce_checked(m, t, opts);
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
  auto r = reduce_checked(m, t, opts);
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
  auto r = reduce_checked(m, t, opts);
  std::set<std::string> upstream;
  for (int i = 0; i <= 3; ++i)
    for (const char* n : {"a", "b", "h"}) upstream.insert(n + std::to_string(i));
  EXPECT_EQ(kept_names(m, r.best), upstream);
  // The fully marked model, then 4 bisection probes (b4, b2, b3, h3): 5 over the 23 nodes.
  EXPECT_EQ(t.calls, 5u);
}

}  // namespace
}  // namespace reduce
