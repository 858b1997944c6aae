// CheckRunner: runs candidate tests on up to `jobs` slots, in the priority order the scheduler
// gives, and keeps every verdict. It decides nothing: which candidates matter is the scheduler's.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <tbb/task_arena.h>

#include "reducer/candidate.h"
#include "reduction_graph.h"

namespace reduce::detail {

struct CheckCounts {
  size_t checks = 0;      // verdicts the test gave (its own cache hits included)
  size_t cache_hits = 0;  // of which the test answered from its cache
  size_t slipped = 0;
  size_t invalid = 0;
  size_t cancelled = 0;  // tests cancelled because the scheduler no longer wanted them
};

// A candidate the scheduler wants tested, with the longest chain among the verdicts its planning
// followed (the real path's answers, and the known answers a guessed path went through): the
// earliest round it could start in, whatever else came in meanwhile.
struct Wanted {
  Candidate candidate;
  size_t rests_on = 0;
  size_t pass = 0;  // the pass of the path that planned it (where the tests went, for the log)
};

struct Verdict {
  TestOutcome outcome = TestOutcome::Uninteresting;
  std::vector<std::string> failing_outputs;  // TestResult::failing_outputs of an interesting one
  // The longest chain of tests ending with it, each waiting for an earlier verdict it needed: a
  // test whose planning followed answers of round r at most (Wanted::rests_on) ends round r + 1
  // (r + N when it ran the engine N times; r for a cache hit or a refusal before the engine).
  // A test that found no slot is planned again later, on more answers: slots count through that.
  // ReduceResult::rounds is the real path's longest.
  size_t round = 0;
  size_t pass = 0;    // Wanted::pass of the test that gave it
  bool ran = false;   // it reached the engine (not a cache hit, not refused as invalid)
  bool used = false;  // the real path read it (CheckRunner::use)
  bool interesting() const { return outcome == TestOutcome::Interesting; }
};

class CheckRunner {
 public:
  // `on_verdict` runs on the scheduling thread for each new verdict (progress, logs).
  // `on_wait`: see ReduceOptions::on_wait. Candidates are checked by `g.check` before any test.
  CheckRunner(CandidateTest& test, const ReductionGraph& g, int jobs, const std::atomic<bool>* stop,
              std::function<void(const Candidate&, const Verdict&, bool cache_hit)> on_verdict,
              std::function<void(bool blocked, size_t running)> on_wait = {});
  ~CheckRunner();
  CheckRunner(const CheckRunner&) = delete;
  CheckRunner& operator=(const CheckRunner&) = delete;

  // The verdict of a candidate tested before; a malformed candidate (one ReductionGraph::check
  // refuses: a reducer bug, counted) is answered "not interesting" without a test.
  const Verdict* known(const Candidate& c);
  // Every verdict so far.
  const std::unordered_map<Candidate, Verdict>& verdicts() const { return verdicts_; }
  // Records that the reduction's real path read the verdict of `c` (Verdict::used).
  void use(const Candidate& c);
  // Tests cancelled after they started, by Wanted::pass.
  const std::vector<size_t>& cancelled_by_pass() const { return cancelled_by_pass_; }

  // Makes the tests in flight follow `wanted` (distinct candidates without a verdict, most
  // wanted first; the first is the one the reduction waits for): the first `jobs` of them run,
  // starting while slots are free; a test not among them is cancelled when a slot is needed for
  // one that is (tests not in `wanted` at all first, the most recently started first). Nothing
  // starts or is cancelled while a listed test of a batch (one call's starts) that has already
  // given an answer still runs: the next tests are chosen on all of a batch's answers.
  void schedule(const std::vector<Wanted>& wanted);
  // Blocks until a test ends (telling on_wait before and after) and records the verdicts that
  // came in; returns the candidates that got one. Returns at once when stopped.
  std::vector<Candidate> wait();
  // Cancels every test and waits until all have ended.
  void drain();

  // The stop flag was seen (every later call does nothing).
  bool stopped();
  // A test threw: the reduction cannot go on (the message of the exception).
  const std::optional<std::string>& failure() const { return failure_; }
  int jobs() const { return jobs_; }
  size_t running() const { return inflight_.size() + cancelling_; }
  // Tests that ended so far (answered or cancelled): until one more does, scheduling again the
  // same list changes nothing.
  size_t ended() const { return ended_; }
  const CheckCounts& counts() const { return counts_; }
  size_t malformed() const { return malformed_; }

 private:
  struct Job;
  bool well_formed(const Candidate& c) const;
  void launch(const Wanted& w);
  // A listed test of a batch no later than the latest one that has answered still runs: its
  // answer is imminent, so new tests wait for it.
  bool answers_imminent(const std::unordered_map<Candidate, size_t>& rank) const;
  std::vector<Candidate> collect(std::unique_lock<std::mutex>& lock);

  CandidateTest& test_;
  const ReductionGraph& g_;
  int jobs_;
  const std::atomic<bool>* stop_;
  std::function<void(const Candidate&, const Verdict&, bool)> on_verdict_;
  std::function<void(bool, size_t)> on_wait_;
  std::unique_ptr<tbb::task_arena> arena_;
  std::unordered_map<Candidate, Verdict> verdicts_;
  CheckCounts counts_;
  size_t malformed_ = 0;
  std::vector<size_t> cancelled_by_pass_;
  bool stopped_ = false;
  std::optional<std::string> failure_;
  const Verdict not_interesting_{};

  std::unordered_map<Candidate, std::shared_ptr<Job>> inflight_;  // running, not cancelled
  size_t cancelling_ = 0;  // cancelled tests still holding their slot
  size_t launched_ = 0;    // start order
  size_t ended_ = 0;       // tests collected (ended())
  size_t batch_ = 0;           // schedule() calls that started tests
  size_t answered_batch_ = 0;  // the latest batch a test of which has answered

  std::mutex mutex_;
  std::condition_variable finished_;
  std::vector<std::shared_ptr<Job>> done_;  // ended, not yet collected (guarded by mutex_)
};

}  // namespace reduce::detail
