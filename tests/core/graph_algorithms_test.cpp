// Reachability and (post-)dominators on small DAGs: diamond, chain, two sinks, disconnected, subsets.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/graph_algorithms.h"

namespace reduce {
namespace {

struct Op {
  std::string output;
  std::vector<std::string> inputs;
};

// Node k produces ops[k].output from its inputs; values no op produces are graph inputs, values
// no op reads are graph outputs.
struct Dag {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();  // the index points into it
  GraphIndex index;
};

Dag make_dag(const std::vector<Op>& ops) {
  Dag d;
  std::set<std::string> produced, read;
  for (const auto& op : ops) {
    produced.insert(op.output);
    read.insert(op.inputs.begin(), op.inputs.end());
  }
  for (const auto& v : read)
    if (!produced.count(v)) d.graph->inputs.push_back(ValueInfo{v, {}, {}});
  for (const auto& op : ops) {
    Node n;
    n.name = op.output;
    n.op_type = "Sum";
    n.inputs = op.inputs;
    n.outputs = {op.output};
    d.graph->nodes.push_back(std::move(n));
    if (!read.count(op.output)) d.graph->outputs.push_back(ValueInfo{op.output, {}, {}});
  }
  auto index = GraphIndex::build(*d.graph);
  EXPECT_TRUE(index.ok()) << index.error().message();
  d.index = std::move(index).value();
  return d;
}

std::vector<size_t> marked(const NodeMask& mask) {
  std::vector<size_t> out;
  for (size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) out.push_back(i);
  return out;
}

NodeMask mask_of(size_t n, const std::vector<size_t>& nodes) {
  NodeMask m(n, false);
  for (size_t i : nodes) m[i] = true;
  return m;
}

constexpr size_t V = kVirtualNode;

// 0 ─┬─ 1 ─┬─ 3
//    └─ 2 ─┘
Dag diamond() { return make_dag({{"a", {"X"}}, {"b", {"a"}}, {"c", {"a"}}, {"d", {"b", "c"}}}); }

TEST(GraphAlgorithms, DiamondJoinPostDominatesEveryNode) {
  Dag d = diamond();
  EXPECT_EQ(immediate_post_dominators(d.index), (std::vector<size_t>{3, 3, 3, V}));
}

TEST(GraphAlgorithms, DiamondForkDominatesEveryNode) {
  Dag d = diamond();
  EXPECT_EQ(immediate_dominators(d.index), (std::vector<size_t>{V, 0, 0, 0}));
}

TEST(GraphAlgorithms, DiamondAncestorsAndDescendantsIncludeTheStartNodes) {
  Dag d = diamond();
  const std::vector<size_t> b{1}, c_and_a{2, 0};
  EXPECT_EQ(marked(ancestors(d.index, b)), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(marked(descendants(d.index, b)), (std::vector<size_t>{1, 3}));
  EXPECT_EQ(marked(descendants(d.index, c_and_a)), (std::vector<size_t>{0, 1, 2, 3}));
}

TEST(GraphAlgorithms, ChainEachNodeIsPostDominatedByItsReader) {
  Dag d = make_dag({{"a", {"X"}}, {"b", {"a"}}, {"c", {"b"}}});
  EXPECT_EQ(immediate_post_dominators(d.index), (std::vector<size_t>{1, 2, V}));
  EXPECT_EQ(immediate_dominators(d.index), (std::vector<size_t>{V, 0, 1}));
  const std::vector<size_t> last{2}, middle{1};
  EXPECT_EQ(marked(ancestors(d.index, last)), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(marked(descendants(d.index, middle)), (std::vector<size_t>{1, 2}));
}

// 0 ─┬─ 1 (output)
//    └─ 2 (output): the fork reaches the exit along two paths, so only the exit post-dominates it.
TEST(GraphAlgorithms, TwoSinksArePostDominatedOnlyByTheVirtualExit) {
  Dag d = make_dag({{"a", {"X"}}, {"y", {"a"}}, {"z", {"a"}}});
  EXPECT_EQ(immediate_post_dominators(d.index), (std::vector<size_t>{V, V, V}));
}

// Two independent chains: 0 -> 1 and 2 -> 3.
TEST(GraphAlgorithms, DisconnectedComponentsDoNotReachEachOther) {
  Dag d = make_dag({{"a", {"X"}}, {"b", {"a"}}, {"p", {"Y"}}, {"q", {"p"}}});
  const std::vector<size_t> b{1}, p{2};
  EXPECT_EQ(marked(ancestors(d.index, b)), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(marked(descendants(d.index, p)), (std::vector<size_t>{2, 3}));
  EXPECT_EQ(immediate_post_dominators(d.index), (std::vector<size_t>{1, V, 3, V}));
  EXPECT_EQ(immediate_dominators(d.index), (std::vector<size_t>{V, 0, V, 2}));
}

TEST(GraphAlgorithms, ReachabilityWithinASubsetStopsAtNodesOutsideIt) {
  Dag d = diamond();
  const std::vector<size_t> join{3};
  // Without the fork: the branches are the join's only ancestors.
  EXPECT_EQ(marked(ancestors(d.index, join, mask_of(4, {1, 2, 3}))), (std::vector<size_t>{1, 2, 3}));
  // Without branch 2, the fork is still reached through branch 1.
  EXPECT_EQ(marked(ancestors(d.index, join, mask_of(4, {0, 1, 3}))), (std::vector<size_t>{0, 1, 3}));
  // Without both branches, nothing but the start.
  EXPECT_EQ(marked(ancestors(d.index, join, mask_of(4, {0, 3}))), (std::vector<size_t>{3}));
}

TEST(GraphAlgorithms, StartNodesOutsideTheSubsetAreStillMarked) {
  Dag d = diamond();
  const std::vector<size_t> fork{0};
  EXPECT_EQ(marked(descendants(d.index, fork, mask_of(4, {2, 3}))), (std::vector<size_t>{0, 2, 3}));
}

TEST(GraphAlgorithms, PostDominatorsWithinASubsetSeeOnlyItsEdges) {
  Dag d = diamond();
  // Branch 2 left out: the fork now feeds the join only through branch 1, which post-dominates
  // it; a node outside the subset has no post-dominator.
  EXPECT_EQ(immediate_post_dominators(d.index, mask_of(4, {0, 1, 3})), (std::vector<size_t>{1, 3, V, V}));
  // The join left out: both branches feed the exit, so the fork is post-dominated by the exit only.
  EXPECT_EQ(immediate_post_dominators(d.index, mask_of(4, {0, 1, 2})), (std::vector<size_t>{V, V, V, V}));
}

TEST(GraphAlgorithms, DeepChainsDoNotExhaustTheStack) {
  std::vector<Op> ops{{"v0", {"X"}}};
  const size_t n = 100000;
  for (size_t i = 1; i < n; ++i) ops.push_back({"v" + std::to_string(i), {"v" + std::to_string(i - 1)}});
  Dag d = make_dag(ops);
  const std::vector<size_t> last{n - 1};
  EXPECT_EQ(marked(ancestors(d.index, last)).size(), n);
  const auto ipdom = immediate_post_dominators(d.index);
  EXPECT_EQ(ipdom[0], 1u);
  EXPECT_EQ(ipdom[n - 2], n - 1);
  EXPECT_EQ(ipdom[n - 1], V);
}

}  // namespace
}  // namespace reduce
