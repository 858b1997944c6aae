// FailureTarget: matching verdicts with the target failure, counting slippage, the --repeat bound.
#include "oracle/failure_target.h"

#include "fail_criteria.h"

namespace reduce {

void FailureTarget::set(const FailureSignature& signature) {
  signature_ = signature;
  set_ = true;
}

SignatureMatch FailureTarget::match(const Verdict& v) const {
  if (v.invalid) return SignatureMatch::Different;
  if (criteria_->has_regexes())
    return !v.signature.fails() ? SignatureMatch::Pass
           : criteria_->matches_regex(v.signature.message) ? SignatureMatch::Same
                                                           : SignatureMatch::Different;
  return match_signature(signature_, v.signature);
}

SignatureMatch FailureTarget::classify(const Verdict& v) {
  const SignatureMatch m = match(v);
  if (m == SignatureMatch::Different && !v.cache_hit) ++slipped_;
  return m;
}

bool FailureTarget::shown_by_majority(int failing_runs, int runs) {
  const bool shown = 2 * failing_runs > runs && (!set_ || failing_runs >= original_failing_runs_);
  if (!set_)
    for (int seen = original_failing_runs_.load();
         seen < failing_runs && !original_failing_runs_.compare_exchange_weak(seen, failing_runs);) {
    }
  return shown;
}

}  // namespace reduce
