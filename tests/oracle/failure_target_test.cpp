// FailureTarget: same / different / pass relative to the target, slippage counted by classify only,
// clearing the target, and the --repeat bound a candidate's majority must reach.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fail_criteria.h"
#include "oracle/failure_target.h"

namespace reduce {
namespace {

FailCriteria criteria(std::vector<std::string> regexes = {}) {
  auto c = FailCriteria::create(regexes, {}, {});
  EXPECT_TRUE(c.ok()) << c.error().message();
  return std::move(c).value();
}

FailureSignature error(const std::string& normalized) {
  FailureSignature s;
  s.kind = FailureKind::Error;
  s.message = normalized;
  s.normalized = normalized;
  return s;
}

Verdict verdict(const FailureSignature& s) {
  Verdict v;
  v.signature = s;
  return v;
}

TEST(FailureTarget, TheTargetsFailureIsTheSame) {
  const FailCriteria none = criteria();
  FailureTarget target(none);
  target.set(error("Cast layer <name>: output type conflicts"));
  EXPECT_TRUE(target.is_set());
  EXPECT_EQ(target.signature().normalized, "Cast layer <name>: output type conflicts");
  EXPECT_EQ(target.match(verdict(error("Cast layer <name>: output type conflicts"))), SignatureMatch::Same);
}

TEST(FailureTarget, AnotherFailureIsDifferentAndNoFailurePasses) {
  const FailCriteria none = criteria();
  FailureTarget target(none);
  target.set(error("Cast layer <name>: output type conflicts"));
  EXPECT_EQ(target.match(verdict(error("Pad layer <name>: unsupported mode"))), SignatureMatch::Different);
  FailureSignature crash;
  crash.kind = FailureKind::Crash;
  crash.signal = 11;
  EXPECT_EQ(target.match(verdict(crash)), SignatureMatch::Different);
  EXPECT_EQ(target.match(verdict(FailureSignature{})), SignatureMatch::Pass);
  // Not runnable is no answer on the model: never the same failure, nor a pass.
  Verdict invalid = verdict(error("Cast layer <name>: output type conflicts"));
  invalid.invalid = true;
  EXPECT_EQ(target.match(invalid), SignatureMatch::Different);
}

TEST(FailureTarget, AFailRegexDecidesInsteadOfTheNormalizedMessage) {
  const FailCriteria regex = criteria({"BAD NODE"});
  FailureTarget target(regex);
  target.set(error("BAD NODE 3"));
  FailureSignature other = error("another message");
  other.message = "BAD NODE 17 and more";
  EXPECT_EQ(target.match(verdict(other)), SignatureMatch::Same);
  EXPECT_EQ(target.match(verdict(error("BAD LUCK"))), SignatureMatch::Different);
  EXPECT_EQ(target.match(verdict(FailureSignature{})), SignatureMatch::Pass);
}

TEST(FailureTarget, ClassifyCountsSlippageAndMatchDoesNot) {
  const FailCriteria none = criteria();
  FailureTarget target(none);
  target.set(error("Cast layer <name>: output type conflicts"));
  const Verdict slipped = verdict(error("Pad layer <name>: unsupported mode"));
  EXPECT_EQ(target.match(slipped), SignatureMatch::Different);
  EXPECT_EQ(target.slipped(), 0u);
  EXPECT_EQ(target.classify(slipped), SignatureMatch::Different);
  EXPECT_EQ(target.slipped(), 1u);
  // The same failure and a pass are no slippage; a cache hit was counted when it ran.
  EXPECT_EQ(target.classify(verdict(error("Cast layer <name>: output type conflicts"))), SignatureMatch::Same);
  EXPECT_EQ(target.classify(verdict(FailureSignature{})), SignatureMatch::Pass);
  Verdict cached = slipped;
  cached.cache_hit = true;
  EXPECT_EQ(target.classify(cached), SignatureMatch::Different);
  EXPECT_EQ(target.slipped(), 1u);
}

TEST(FailureTarget, ClearLeavesNoTarget) {
  const FailCriteria none = criteria();
  FailureTarget target(none);
  EXPECT_FALSE(target.is_set());
  target.set(error("Cast layer <name>: output type conflicts"));
  const Verdict other = verdict(error("Pad layer <name>: unsupported mode"));
  EXPECT_FALSE(target.shown_by(other));
  target.clear();
  EXPECT_FALSE(target.is_set());
  // Without a target any failure shows the failure (the original's own runs).
  EXPECT_TRUE(target.shown_by(other));
  EXPECT_FALSE(target.shown_by(verdict(FailureSignature{})));
}

TEST(FailureTarget, ARepeatedCandidateFailsInAMajorityAndAsOftenAsTheOriginal) {
  const FailCriteria none = criteria();
  FailureTarget target(none);
  // Evaluations before the target is set: the majority decides, and the most failing runs are the bound.
  EXPECT_FALSE(target.shown_by_majority(2, 5));
  EXPECT_TRUE(target.shown_by_majority(4, 5));
  EXPECT_TRUE(target.shown_by_majority(3, 5));  // a candidate beside the original: the bound stays 4
  target.set(error("Cast layer <name>: output type conflicts"));
  EXPECT_FALSE(target.shown_by_majority(3, 5));  // a majority, but less often than the original
  EXPECT_TRUE(target.shown_by_majority(4, 5));
  EXPECT_TRUE(target.shown_by_majority(5, 5));
  EXPECT_FALSE(target.shown_by_majority(2, 5));
  // Once set, evaluations no longer move the bound.
  EXPECT_TRUE(target.shown_by_majority(4, 5));
  // Another tolerance clears the target, not the bound: it only grows.
  target.clear();
  EXPECT_TRUE(target.shown_by_majority(3, 5));
  target.set(error("Cast layer <name>: output type conflicts"));
  EXPECT_FALSE(target.shown_by_majority(3, 5));
}

}  // namespace
}  // namespace reduce
