// FailureTarget: the failure every candidate is compared with, how a verdict relates to it, and the
// bound a repeated evaluation (--repeat) must reach to show it.
#pragma once

#include <atomic>
#include <cstdint>

#include "oracle/signature.h"
#include "oracle/verdict.h"

namespace reduce {

class FailCriteria;

// Evaluations run concurrently: match, classify and the repeat bound may be called from any
// thread; set and clear between searches only, not while evaluations run.
class FailureTarget {
 public:
  // With fail regexes in `criteria` (the check options, which must outlive the target) a failure
  // is the same when any of them matches its message, instead of comparing normalized messages.
  explicit FailureTarget(const FailCriteria& criteria) : criteria_(&criteria) {}

  // The failure to keep: set by the caller from the original's verdict.
  void set(const FailureSignature& signature);
  // No target again (another tolerance: Oracle::set_tolerance). The repeat bound is kept: it only
  // grows, so a later original's runs can only make it stricter.
  void clear() { set_ = false; }
  bool is_set() const { return set_; }
  const FailureSignature& signature() const { return signature_; }

  // Same / different / pass relative to the target (an invalid verdict is different).
  SignatureMatch match(const Verdict& verdict) const;
  // match, counting a different failure as slippage (a cache hit was counted when it first ran).
  SignatureMatch classify(const Verdict& verdict);
  // Verdicts classify found different (OracleStatistics::slipped).
  uint64_t slipped() const { return slipped_.load(); }

  // One run of a repeated evaluation shows the failure: the target's once it is set, any before.
  bool shown_by(const Verdict& run) const { return set_ ? match(run) == SignatureMatch::Same : run.signature.fails(); }
  // Whether an evaluation of `runs` runs, `failing_runs` of them shown_by, shows the failure: in a
  // majority, and once the target is set at least as often as the most failing runs of an
  // evaluation before it (the original's, or a candidate's that ran beside it: then the bound is
  // only stricter). A failure that comes back less reliably than the original's is not the same
  // one: random failures of the engine are outvoted. Before the target is set, records the bound.
  bool shown_by_majority(int failing_runs, int runs);

 private:
  const FailCriteria* criteria_;
  FailureSignature signature_;
  bool set_ = false;
  std::atomic<int> original_failing_runs_{0};
  std::atomic<uint64_t> slipped_{0};
};

}  // namespace reduce
