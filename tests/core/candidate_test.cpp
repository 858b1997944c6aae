// The candidate type: the whole-model candidate, equality and the canonical hash.
#include <gtest/gtest.h>

#include <set>
#include <unordered_set>

#include "core/candidate.h"
#include "core/model.h"

namespace reduce {
namespace {

Candidate with_nodes(std::vector<size_t> nodes) {
  Candidate c;
  c.nodes = std::move(nodes);
  return c;
}

TEST(Candidate, WholeKeepsEveryNodeWithDefaultOutputsAndNoEdits) {
  Graph g;
  g.nodes.resize(3);
  const Candidate c = Candidate::whole(g);
  EXPECT_EQ(c.nodes, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(c, with_nodes({0, 1, 2}));
}

TEST(Candidate, EqualCandidatesHashEqual) {
  Candidate a = with_nodes({1, 4});
  a.filled["w"] = 0.0;
  Candidate b = a;
  EXPECT_EQ(candidate_hash(a), candidate_hash(b));
  b.filled["w"] = -0.0;  // equal as doubles: equal candidates
  ASSERT_EQ(a, b);
  EXPECT_EQ(candidate_hash(a), candidate_hash(b));
  EXPECT_EQ(std::hash<Candidate>{}(a), std::hash<Candidate>{}(b));
}

TEST(Candidate, EveryFieldChangesTheHash) {
  const Candidate base = with_nodes({1, 2});
  std::vector<Candidate> variants(7, base);
  variants[1].nodes = {1, 3};
  variants[2].frozen = {"a"};
  variants[3].outputs = {"a"};
  variants[4].input_shapes["a"] = Shape{1, 2};
  variants[5].filled["w"] = 1.0;
  variants[6].dropped_attributes = {{1, "alpha"}};
  for (size_t i = 0; i < variants.size(); ++i)
    for (size_t j = i + 1; j < variants.size(); ++j)
      EXPECT_NE(candidate_hash(variants[i]), candidate_hash(variants[j])) << i << " vs " << j;
}

// Fields are length-prefixed: moving a name from one list to the next is another candidate.
TEST(Candidate, TheSameItemsInAnotherFieldHashDifferently) {
  Candidate frozen = with_nodes({0}), output = with_nodes({0});
  frozen.frozen = {"x"};
  output.outputs = {"x"};
  EXPECT_NE(candidate_hash(frozen), candidate_hash(output));
  Candidate split = with_nodes({0}), joined = with_nodes({0});
  split.outputs = {"ab", "c"};
  joined.outputs = {"a", "bc"};
  EXPECT_NE(candidate_hash(split), candidate_hash(joined));
}

// Many similar candidates (every pair and triple of 64 nodes): no 128-bit collision, and the
// 64-bit std::hash spreads them over an unordered_set's buckets.
TEST(Candidate, SimilarCandidatesDoNotCollide) {
  std::unordered_set<Candidate> set;
  std::set<std::pair<uint64_t, uint64_t>> hashes;
  size_t count = 0;
  for (size_t i = 0; i < 64; ++i)
    for (size_t j = i + 1; j < 64; ++j) {
      for (size_t k = j + 1; k < 64; k += 7) {
        const Candidate c = with_nodes({i, j, k});
        set.insert(c);
        hashes.insert(candidate_hash(c));
        ++count;
      }
      set.insert(with_nodes({i, j}));
      hashes.insert(candidate_hash(with_nodes({i, j})));
      ++count;
    }
  EXPECT_EQ(set.size(), count);
  EXPECT_EQ(hashes.size(), count);
  std::set<size_t> small;
  for (const auto& c : set) small.insert(std::hash<Candidate>{}(c));
  EXPECT_EQ(small.size(), count);
}

}  // namespace
}  // namespace reduce
