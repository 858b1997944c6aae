// CheckRunner: runs candidate tests with up to `jobs` in flight and answers in sequential order,
// so that what the reducer learns never depends on the number of jobs.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
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

struct CandidateHash {
  size_t operator()(const Candidate& c) const;
};

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
  CheckRunner(CandidateTest& test, size_t node_count, int jobs, const std::atomic<bool>* stop,
              std::function<void(const Candidate&, TestOutcome, bool cache_hit)> on_verdict);
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

  // Dry mode (sink set): candidates without a known verdict are not tested but appended to the
  // sink and answered "not interesting"; nothing is counted. For prefetching a predicted run.
  void set_dry(std::vector<Candidate>* sink) {
    dry_ = sink;
    dry_seen_.clear();
  }

  // The stop flag was seen: every later call answers "not interesting" without testing.
  bool stopped() const { return stopped_; }
  int jobs() const { return jobs_; }
  const CheckCounts& counts() const { return counts_; }
  // Candidates refused before testing because they were malformed (a reducer bug if non-zero).
  size_t malformed() const { return malformed_; }

 private:
  struct Job;
  std::vector<signed char> run(size_t count, const CandidateMaker& make, bool stop_at_first);
  bool well_formed(const Candidate& c) const;
  void record(const Candidate& c, TestOutcome outcome, bool cache_hit);

  CandidateTest& test_;
  size_t node_count_;
  int jobs_;
  const std::atomic<bool>* stop_;
  std::function<void(const Candidate&, TestOutcome, bool)> on_verdict_;
  std::unique_ptr<tbb::global_control> parallelism_;
  std::unique_ptr<tbb::task_arena> arena_;
  std::unordered_map<Candidate, TestOutcome, CandidateHash> memo_;
  CheckCounts counts_;
  size_t malformed_ = 0;
  bool stopped_ = false;
  std::vector<Candidate>* dry_ = nullptr;
  std::unordered_set<Candidate, CandidateHash> dry_seen_;  // answered "not interesting" while dry

  std::mutex mutex_;
  std::condition_variable finished_;
  std::vector<std::shared_ptr<Job>> done_;  // finished jobs not yet collected (guarded by mutex_)
};

}  // namespace reduce::detail
