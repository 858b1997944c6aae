// Candidates judged by the oracle.
#include "oracle_checks.h"

#include <algorithm>
#include <optional>
#include <sstream>


namespace reduce {

void TargetGate::open(bool proceed, size_t rounds) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_ = proceed ? State::Open : State::Closed;
  rounds_ = rounds;
  changed_.notify_all();
}

bool TargetGate::wait(const std::atomic<bool>& cancel) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (state_ == State::Pending && !cancel.load()) changed_.wait_for(lock, std::chrono::milliseconds(20));
  return state_ == State::Open;
}

size_t TargetGate::rounds() {
  std::lock_guard<std::mutex> lock(mutex_);
  return rounds_;
}

bool OracleTest::runs_in_process(const Oracle& oracle) {
  return !oracle.spec() || oracle.spec()->in_process();
}

TestOutcome OracleTest::outcome_of(const Verdict& v) {
  if (v.invalid) return TestOutcome::Invalid;
  switch (oracle_.target().classify(v)) {
    case SignatureMatch::Same: return TestOutcome::Interesting;
    case SignatureMatch::Pass: return TestOutcome::Uninteresting;
    case SignatureMatch::Different: return TestOutcome::Slipped;
  }
  return TestOutcome::Uninteresting;
}

TestResult OracleTest::test(const Candidate& candidate, const std::atomic<bool>& cancel) {
  if (cancel.load()) return {TestOutcome::Cancelled, false, {}};
  if (in_process_ && !gate_.wait(cancel)) return {TestOutcome::Cancelled, false, {}};
  if (budget_ && budget_->max > 0) {
    const OracleStatistics stats = oracle_.statistics();
    if (stats.evaluations - stats.invalid >= budget_->max) {
      budget_->reached.store(true);
      budget_->stop->store(true);
      return {TestOutcome::Cancelled, false, {}};
    }
  }
  // A remote verdict is adopted by the local oracle: counted in its statistics and cached, so the
  // report and the bundle's run of the reproducer do not depend on where a check ran.
  std::optional<Verdict> remote = remote_ ? remote_->evaluate(candidate, cancel) : std::nullopt;
  if (remote) oracle_.adopt(candidate, *remote);
  Verdict v = remote ? std::move(*remote) : oracle_.evaluate(candidate, &cancel);
  TestResult r;
  r.cache_hit = v.cache_hit;
  if (!gate_.wait(cancel)) return {TestOutcome::Cancelled, false, {}};
  r.outcome = v.cancelled || cancel.load() ? TestOutcome::Cancelled : outcome_of(v);
  r.runs = static_cast<size_t>(std::max(1, v.runs));
  // The verdict waited for the gate; an engine in this process ran only after it opened.
  r.after_rounds = gate_.rounds() + (in_process_ && !v.cache_hit && !v.invalid ? r.runs : 0);
  if (r.outcome == TestOutcome::Interesting)
    for (const auto& o : v.outputs)
      if (!o.passed) r.failing_outputs.push_back(o.name);
  const bool answered = r.outcome == TestOutcome::Interesting || r.outcome == TestOutcome::Uninteresting;
  if (evidence_ && answered && !v.cache_hit) evidence_->observe(candidate, r.outcome == TestOutcome::Interesting, v.flaky());
  if (verbose_) log_check(candidate, v, r);
  return r;
}

void OracleTest::log_check(const Candidate& candidate, const Verdict& v, const TestResult& r) {
  std::ostringstream line;
  line << "check: " << candidate_size(model_, candidate) << " nodes -> " << to_string(r.outcome)
       << (r.cache_hit ? " (cached)" : "") << (v.invalid ? " [" + v.invalid_reason + "]" : "")
       << (r.outcome == TestOutcome::Slipped ? " [" + v.signature.to_string() + "]" : "");
  log_.line(line.str());
}

}  // namespace reduce
