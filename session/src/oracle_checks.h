// The reducer's view of the oracle (same failure = interesting), and the gate that holds its
// answers until the original model's verdict has set the failure to keep.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "oracle/oracle.h"
#include "reducer/candidate.h"
#include "session/remote_checks.h"
#include "session_log.h"
#include "session/trust_evidence.h"

namespace reduce {

// The original model's check runs while the reduction already runs its first candidates on an
// engine in another process (with a slow engine that saves one engine run of wall time);
// candidates are judged once it is known. An engine in this process waits for the verdict before
// its first candidates run: the original is the largest model of the reduction, and a candidate
// run beside it would hold its own activations at the same time (PP-OCR det at 640x640, -j 2).
class TargetGate {
 public:
  // `rounds`: the chain of engine runs that had to end before it opens (the original's check,
  // then the probes that waited for it), which every candidate's verdict waits for.
  void open(bool proceed, size_t rounds = 0);
  // True once the target is set; false when the reduction will not go on or `cancel` is set.
  bool wait(const std::atomic<bool>& cancel);
  size_t rounds();  // as given to open()

 private:
  enum class State { Pending, Open, Closed } state_ = State::Pending;
  size_t rounds_ = 0;
  std::mutex mutex_;
  std::condition_variable changed_;
};

// A limit on the engine runs of a session (SessionOptions::max_engine_runs): when the oracle has
// run the engine `max` times, `stop` is set and `reached` says why.
struct EngineRunBudget {
  uint64_t max = 0;  // 0: no limit
  std::atomic<bool>* stop = nullptr;
  std::atomic<bool> reached{false};
};

class OracleTest : public CandidateTest {
 public:
  // `evidence`, when given, sees every verdict that ran the engine (TrustEvidence).
  OracleTest(Oracle& oracle, TargetGate& gate, SessionLog& log, bool verbose, const Model& model,
             RemoteChecks* remote = nullptr, EngineRunBudget* budget = nullptr, TrustEvidence* evidence = nullptr)
      : oracle_(oracle), gate_(gate), log_(log), verbose_(verbose), model_(model), remote_(remote),
        in_process_(!remote && runs_in_process(oracle)), budget_(budget), evidence_(evidence) {}
  TestResult test(const Candidate& candidate, const std::atomic<bool>& cancel) override;

 private:
  static bool runs_in_process(const Oracle& oracle);
  TestOutcome outcome_of(const Verdict& verdict);
  void log_check(const Candidate& candidate, const Verdict& verdict, const TestResult& result);

  Oracle& oracle_;
  TargetGate& gate_;
  SessionLog& log_;
  bool verbose_;
  const Model& model_;
  RemoteChecks* remote_;
  bool in_process_;  // candidates run in this process: none before the original's verdict
  EngineRunBudget* budget_;
  TrustEvidence* evidence_;
};

}  // namespace reduce
