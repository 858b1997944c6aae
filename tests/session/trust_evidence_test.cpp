// TrustEvidence: the signs that make a reduction spend more trust runs (issue 69). A deterministic
// engine fails on every model that contains what fails; verdicts that say otherwise are the sign.
#include <gtest/gtest.h>

#include "session/trust_evidence.h"

namespace reduce {
namespace {

Candidate nodes(std::vector<size_t> kept) {
  Candidate c;
  c.nodes = std::move(kept);
  return c;
}

TEST(TrustEvidence, ConsistentVerdictsGiveNoReason) {
  TrustEvidence e;
  e.observe(nodes({0, 1, 2, 3}), true, false);
  e.observe(nodes({0, 1}), false, false);
  e.observe(nodes({2, 3}), true, false);
  e.observe(nodes({3}), true, false);
  e.observe(nodes({2}), false, false);
  EXPECT_EQ(e.contradictions(), 0u);
  EXPECT_TRUE(e.reasons().empty());
}

TEST(TrustEvidence, AFailingCandidateInsideAPassingOneIsASign) {
  TrustEvidence e;
  e.observe(nodes({1, 2, 3}), false, false);
  e.observe(nodes({2}), true, false);
  EXPECT_EQ(e.contradictions(), 1u);
  ASSERT_EQ(e.reasons().size(), 1u);
  EXPECT_NE(e.reasons()[0].find("1 check(s) of the search failed where a larger candidate passed"), std::string::npos);
}

TEST(TrustEvidence, APassingCandidateAroundAFailingOneIsASign) {
  TrustEvidence e;
  e.observe(nodes({4}), true, false);
  e.observe(nodes({3, 4, 5}), false, false);
  e.observe(nodes({3, 4, 5, 6}), false, false);
  EXPECT_EQ(e.contradictions(), 2u);
}

TEST(TrustEvidence, OnlyCandidatesThatDifferInTheirNodesAloneAreCompared) {
  TrustEvidence e;
  Candidate frozen = nodes({1, 2, 3});
  frozen.frozen = {"x"};
  e.observe(frozen, false, false);
  e.observe(nodes({2}), true, false);
  // Marked outputs change what an engine fuses: a marked candidate is compared with nothing.
  Candidate marked = nodes({1, 2, 3, 4});
  marked.outputs = {"a", "b"};
  e.observe(marked, false, false);
  EXPECT_EQ(e.contradictions(), 0u);
  EXPECT_TRUE(e.reasons().empty());
}

TEST(TrustEvidence, RepeatedRunsThatDisagreedAreASign) {
  TrustEvidence e;
  e.observe(nodes({1}), true, true);
  ASSERT_EQ(e.reasons().size(), 1u);
  EXPECT_NE(e.reasons()[0].find("repeated runs (--repeat) disagreed"), std::string::npos);
}

}  // namespace
}  // namespace reduce
