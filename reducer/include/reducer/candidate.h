// CandidateTest: the only way the reducer learns whether a candidate (core/candidate.h) still
// shows the failure (the oracle implements CandidateTest; the reducer knows no engine).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "core/candidate.h"

namespace reduce {

// How one test of a candidate ended.
enum class TestOutcome {
  Interesting,    // shows the same failure as the original: the reducer may commit it
  Uninteresting,  // passes (no failure)
  Slipped,        // fails, but differently (another error, another kind, much smaller error)
  Invalid,        // not a runnable model (failed the structural/ONNX checks, or the reference failed)
  Cancelled,      // the reducer cancelled the test before it ended
};

const char* to_string(TestOutcome outcome);

struct TestResult {
  TestOutcome outcome = TestOutcome::Uninteresting;
  bool cache_hit = false;  // answered from the verdict cache, without running an engine
  // When the test compares output values: the candidate's outputs found wrong, in output order.
  // first-divergence uses them to go straight to the first failing value instead of bisecting.
  std::vector<std::string> failing_outputs;
  // The verdict waited for this many rounds of engine runs the reducer did not start (a session's
  // original check and probes, before its gate opens), its own run included when it ran after
  // them: its chain of rounds (ReduceResult::rounds) is at least this long.
  size_t after_rounds = 0;
  // Engine runs behind the verdict, one after another (a test that repeats each run to take the
  // majority): the rounds it adds to its chain.
  size_t runs = 1;
};

// Decides whether a candidate is interesting. Called concurrently from up to `jobs` threads;
// implementations must be thread-safe and should return promptly (Cancelled) once `cancel` is set.
class CandidateTest {
 public:
  virtual ~CandidateTest() = default;
  virtual TestResult test(const Candidate& candidate, const std::atomic<bool>& cancel) = 0;
};

}  // namespace reduce
