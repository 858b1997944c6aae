// CheckRunner: runs candidate tests with up to `jobs` in flight and answers in sequential order,
// so that what the reducer learns never depends on the number of jobs.
#pragma once

#include <atomic>
#include <cstdint>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include "reducer/candidate.h"

namespace reduce::detail {

struct CheckCounts {
  size_t checks = 0;      // verdicts obtained, cache hits included
  size_t cache_hits = 0;  // answered by the reducer's memo or by the test's own cache
  size_t slipped = 0;
  size_t invalid = 0;
  size_t cancelled = 0;  // tests cancelled because an earlier candidate already won
};

// Builds the i-th candidate of a sequence; nullopt skips it (counts as not interesting, untested).
using CandidateMaker = std::function<std::optional<Candidate>(size_t)>;

class CheckRunner {
 public:
  // `on_verdict` runs on the calling thread after each verdict (for progress and logs).
  // `on_wait` (may be empty): see ReduceOptions::on_wait.
  CheckRunner(CandidateTest& test, size_t node_count, int jobs, const std::atomic<bool>* stop,
              std::function<void(const Candidate&, TestOutcome, bool cache_hit)> on_verdict,
              std::function<void(bool blocked, size_t running)> on_wait = {});
  ~CheckRunner();
  CheckRunner(const CheckRunner&) = delete;
  CheckRunner& operator=(const CheckRunner&) = delete;

  // The first i in [0, count) whose candidate is interesting, as a sequential scan would find it:
  // later candidates run speculatively and are cancelled once an earlier one wins.
  std::optional<size_t> first_interesting(size_t count, const CandidateMaker& make);
  // Whether each candidate is interesting (all of them are tested, in parallel).
  std::vector<bool> all_interesting(size_t count, const CandidateMaker& make);

  // Whether a candidate was already tested (not counted as a check): the walk after a
  // speculative batch reads its answers from here. While dry, collected candidates count as
  // known not interesting.
  std::optional<bool> known_interesting(const Candidate& c) const;
  // Every verdict obtained so far. Read on the reducing thread only (collect() writes it there).
  const std::unordered_map<Candidate, TestOutcome>& verdicts() const { return memo_; }
  // The failing outputs an interesting verdict came with (TestResult::failing_outputs), or null.
  const std::vector<std::string>* failing_outputs(const Candidate& c) const {
    auto it = failing_.find(c);
    return it == failing_.end() ? nullptr : &it->second;
  }

  // Dry mode (sink set): candidates without a known verdict are not tested but appended to the
  // sink and answered "not interesting"; nothing is counted. For prefetching a predicted run.
  // Once the sink holds `limit` candidates, the rest are answered without being built.
  struct DryRun {
    std::vector<Candidate>* sink = nullptr;
    size_t limit = SIZE_MAX;
    std::unordered_set<Candidate> seen;  // answered "not interesting"
  };
  // Enters dry mode (or a dry run nested in one: a prediction made while predicting) and
  // returns the mode it replaces, for end_dry().
  DryRun set_dry(std::vector<Candidate>* sink, size_t limit = SIZE_MAX) {
    DryRun previous = std::move(dry_run_);
    dry_run_ = DryRun{sink, limit, {}};
    return previous;
  }
  void end_dry(DryRun previous) {
    dry_run_ = std::move(previous);
  }

  // Starts tests of `candidates` (in order, while slots are free) in the background and returns
  // at once; their verdicts join the memo when they end, and a later call that asks for one of
  // them waits for it instead of starting it again. With `replace`, background tests no longer
  // listed are cancelled first (speculation about a state the reduction has left), and the
  // candidates that found no free slot queue for the slots that free up while the reduction
  // waits (replacing the previous queue): a prediction may list more than fits, and many of its
  // candidates end at once (the reference refuses an invalid one before the engine runs). Tests
  // the reduction asks for take priority: they cancel the latest background tests when no slot
  // is free.
  void speculate(const std::vector<Candidate>& candidates, bool replace);
  // Starts tests of `candidates` now, in order, as background tests: a test the reduction is about
  // to ask for among several it may ask for next (a decision tree's probes). Unlike speculate(),
  // makes room by cancelling the latest background tests not listed, waiting for them to end.
  void start(const std::vector<Candidate>& candidates);
  // Cancels every background test and waits until all tests have ended.
  void drain();

  // The stop flag was seen: every later call answers "not interesting" without testing. While
  // dry, also once the sink is full: the predicted run has nothing more to collect.
  bool stopped() const { return stopped_ || (dry_run_.sink && dry_run_.sink->size() >= dry_run_.limit); }
  int jobs() const { return jobs_; }
  const CheckCounts& counts() const { return counts_; }
  // Candidates refused before testing because they were malformed (a reducer bug if non-zero).
  size_t malformed() const { return malformed_; }

 private:
  struct Job;
  std::vector<signed char> run(size_t count, const CandidateMaker& make, bool stop_at_first);
  bool well_formed(const Candidate& c) const;
  void record(const Candidate& c, TestOutcome outcome, bool cache_hit);
  std::shared_ptr<Job> launch(Candidate c, bool background);
  // Starts queued background candidates while slots are free.
  void launch_queued();
  // Moves finished jobs into the memo (and counts them); returns them. Called with mutex_ held.
  std::vector<std::shared_ptr<Job>> collect(std::unique_lock<std::mutex>& lock);
  size_t busy() const { return inflight_.size() + cancelling_; }
  using Inflight = std::unordered_map<Candidate, std::shared_ptr<Job>>;
  // Cancels a running test: it leaves inflight_ at once and holds its slot until it ends.
  Inflight::iterator cancel(Inflight::iterator it);
  // Cancels the most recently started background test; false when there is none.
  bool cancel_latest_background(const std::unordered_set<Candidate>& keep = {});

  CandidateTest& test_;
  size_t node_count_;
  int jobs_;
  const std::atomic<bool>* stop_;
  std::function<void(const Candidate&, TestOutcome, bool)> on_verdict_;
  std::function<void(bool, size_t)> on_wait_;
  // Waits (up to 20 ms: queued background work may take the slots it frees) for a test to end,
  // telling on_wait_ before and after.
  void wait_for_a_test(std::unique_lock<std::mutex>& lock);
  std::unique_ptr<tbb::global_control> parallelism_;
  std::unique_ptr<tbb::task_arena> arena_;
  std::unordered_map<Candidate, TestOutcome> memo_;
  std::unordered_map<Candidate, std::vector<std::string>> failing_;
  CheckCounts counts_;
  size_t malformed_ = 0;
  bool stopped_ = false;
  DryRun dry_run_;

  // Tests running, by candidate (reducer thread only); cancelled background tests leave the map
  // at once but hold their slot (cancelling_) until they end.
  Inflight inflight_;
  std::deque<Candidate> queued_;  // background candidates waiting for a free slot, in order
  size_t cancelling_ = 0;
  size_t launched_ = 0;  // start order, to cancel the latest background test first

  std::mutex mutex_;
  std::condition_variable finished_;
  std::vector<std::shared_ptr<Job>> done_;  // finished jobs not yet collected (guarded by mutex_)
};

}  // namespace reduce::detail
