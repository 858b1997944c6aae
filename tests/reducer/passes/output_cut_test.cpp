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
  // Round one's bisection (3) and input-cut's exponential search (6: suffixes of 1, 2, 4, 8, 6
  // and 7 units); round two asks nothing new (11 when output-cut searched n3..n9 again).
  EXPECT_EQ(t.calls, 9u);
}

TEST(Reducer, WhenMarkingOutputsHidesTheFailureTheCutsDoNotTryOneNodeAlone) {
  // A fusion of n3..n9 (in a chain of 12) that marking intermediate values breaks: a fused
  // pattern is several nodes. Output-cut does not bisect over n0 (it reads no other node: alone);
  // input-cut does not try n9 alone: it searches exponentially from the pair (n8, n9), as on any
  // number of units (everything before n9 feeds it alone: the fusion closure says nothing).
  Model m = parse_model(testing::chain_model_text(12));
  auto fused = needs({"n3", "n4", "n5", "n6", "n7", "n8", "n9"});
  SyntheticTest t(m, [&](const CandidateView& v) { return v.outputs.size() == 1 && fused(v); });
  ReduceOptions opts;
  opts.passes = select_passes({"first-divergence", "output-cut", "input-cut"}).value();
  auto r = reduce_checked(m, t, opts);
  EXPECT_EQ(kept_names(m, r.best), (std::set<std::string>{"n3", "n4", "n5", "n6", "n7", "n8", "n9"}));
  // The fully marked model; 3 bisection probes over the sinks n1..n11; suffixes of 2, 4, 8, 6 and
  // 7 nodes; the second round's input-cut is answered from the cache. (A bisection of the 9
  // suffixes asked 3 where this asks 5, and 3-4 where this asks 1 for a pair: Conv+activation.)
  EXPECT_EQ(t.calls, 9u);
}

}  // namespace
}  // namespace reduce
