// Candidate tests on a fixed number of slots, in the scheduler's priority order (check_runner.h).
#include "check_runner.h"

#include <algorithm>
#include <unordered_set>

namespace reduce::detail {

struct CheckRunner::Job {
  Candidate candidate;
  std::atomic<bool> cancel{false};
  bool cancelled = false;  // by the runner (the slot is held until the test ends)
  size_t order = 0;        // start order
  size_t round = 0;        // the round it starts after (Wanted::rests_on)
  size_t pass = 0;         // Wanted::pass
  size_t batch = 0;        // the schedule() call that started it (CheckRunner::batch_)
  TestResult result;
  std::optional<std::string> error;  // what the test threw
};

CheckRunner::CheckRunner(CandidateTest& test, const ReductionGraph& g, int jobs, const std::atomic<bool>* stop,
                         std::function<void(const Candidate&, const Verdict&, bool)> on_verdict,
                         std::function<void(bool, size_t)> on_wait)
    : test_(test),
      g_(g),
      jobs_(std::max(1, jobs)),
      stop_(stop),
      on_verdict_(std::move(on_verdict)),
      on_wait_(std::move(on_wait)) {
  // Tests mostly wait (engines in other processes, devices): an arena of their own, of `jobs`
  // threads, so that `jobs` tests really are in flight (beyond the cores when the process holds a
  // CheckParallelism, reducer/parallelism.h).
  arena_ = std::make_unique<tbb::task_arena>(jobs_, 0);
}

CheckRunner::~CheckRunner() { drain(); }

bool CheckRunner::well_formed(const Candidate& c) const { return g_.check(c).ok(); }

const Verdict* CheckRunner::known(const Candidate& c) {
  if (auto it = verdicts_.find(c); it != verdicts_.end()) return &it->second;
  if (!well_formed(c)) {
    ++malformed_;
    return &not_interesting_;
  }
  return nullptr;
}

void CheckRunner::use(const Candidate& c) {
  if (auto it = verdicts_.find(c); it != verdicts_.end()) it->second.used = true;
}

bool CheckRunner::stopped() {
  if (!stopped_ && ((stop_ && stop_->load()) || failure_)) {
    stopped_ = true;
    drain();
  }
  return stopped_;
}

void CheckRunner::launch(const Wanted& w) {
  auto job = std::make_shared<Job>();
  job->candidate = w.candidate;
  job->order = launched_++;
  job->round = w.rests_on;
  job->pass = w.pass;
  job->batch = batch_;
  inflight_.emplace(w.candidate, job);
  arena_->enqueue([this, job] {
    try {
      job->result = test_.test(job->candidate, job->cancel);
    } catch (const std::exception& e) {
      job->error = e.what();
    } catch (...) {
      job->error = "unknown exception";
    }
    std::lock_guard<std::mutex> g(mutex_);
    done_.push_back(job);
    finished_.notify_all();
  });
}

void CheckRunner::schedule(const std::vector<Wanted>& wanted) {
  if (stopped()) return;
  const size_t slots = static_cast<size_t>(jobs_);
  const size_t top = std::min(slots, wanted.size());
  std::unordered_map<Candidate, size_t> rank;  // position in `wanted`
  for (size_t i = 0; i < wanted.size(); ++i) rank.emplace(wanted[i].candidate, i);
  std::vector<const Wanted*> missing;
  for (size_t i = 0; i < top; ++i) {
    const Candidate& c = wanted[i].candidate;
    if (!inflight_.count(c) && !verdicts_.count(c) && well_formed(c)) missing.push_back(&wanted[i]);
  }
  if (missing.empty() || answers_imminent(rank)) return;
  ++batch_;
  // Make room: cancel the least wanted running tests outside the top.
  const size_t free = running() < slots ? slots - running() : 0;
  if (missing.size() > free) {
    std::vector<std::pair<size_t, std::shared_ptr<Job>>> victims;  // (wanted rank or SIZE_MAX, job)
    for (const auto& [c, job] : inflight_) {
      const auto it = rank.find(c);
      const size_t r = it == rank.end() ? SIZE_MAX : it->second;
      if (r >= top) victims.emplace_back(r, job);
    }
    std::sort(victims.begin(), victims.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second->order > b.second->order;
    });
    for (size_t k = 0; k < victims.size() && k < missing.size() - free; ++k) {
      auto& job = victims[k].second;
      job->cancel = true;
      job->cancelled = true;
      inflight_.erase(job->candidate);
      ++cancelling_;
    }
  }
  for (const Wanted* w : missing) {
    if (running() >= slots) break;
    launch(*w);
  }
}

bool CheckRunner::answers_imminent(const std::unordered_map<Candidate, size_t>& rank) const {
  // Tests started together end together when runs take as long: planning on the first answers of
  // a batch starts guesses that its next answers refute (cancelled after they started, or answered
  // in vain), for no round (a test's round is the answers it rests on, not when it starts).
  for (const auto& [c, job] : inflight_)
    if (job->batch <= answered_batch_ && rank.count(c)) return true;
  return false;
}

std::vector<Candidate> CheckRunner::collect(std::unique_lock<std::mutex>& lock) {
  auto finished = std::move(done_);
  done_.clear();
  lock.unlock();
  std::vector<Candidate> out;
  ended_ += finished.size();
  for (auto& job : finished) {
    if (job->cancelled) --cancelling_;
    else inflight_.erase(job->candidate);
    if (job->error) {
      if (!failure_) failure_ = *job->error;
      continue;
    }
    const TestOutcome outcome = job->result.outcome;
    if (outcome == TestOutcome::Cancelled) {
      ++counts_.cancelled;
      if (cancelled_by_pass_.size() <= job->pass) cancelled_by_pass_.resize(job->pass + 1, 0);
      ++cancelled_by_pass_[job->pass];
      continue;
    }
    ++counts_.checks;
    answered_batch_ = std::max(answered_batch_, job->batch);
    if (job->result.cache_hit) ++counts_.cache_hits;
    if (outcome == TestOutcome::Slipped) ++counts_.slipped;
    if (outcome == TestOutcome::Invalid) ++counts_.invalid;
    const bool ran = outcome != TestOutcome::Invalid && !job->result.cache_hit;
    const size_t round = std::max(job->round + (ran ? job->result.runs : 0), job->result.after_rounds);
    Verdict v{outcome, outcome == TestOutcome::Interesting ? std::move(job->result.failing_outputs) : std::vector<std::string>{},
              round, job->pass, ran};
    const auto [it, added] = verdicts_.emplace(job->candidate, std::move(v));
    if (on_verdict_) on_verdict_(it->first, it->second, job->result.cache_hit);
    out.push_back(job->candidate);
  }
  lock.lock();
  return out;
}

std::vector<Candidate> CheckRunner::wait() {
  if (stopped()) return {};
  std::unique_lock<std::mutex> lock(mutex_);
  if (done_.empty()) {
    // The observer runs without the lock: tests ending meanwhile are seen by the wait below.
    const size_t busy = running();
    if (on_wait_) {
      lock.unlock();
      on_wait_(true, busy);
      lock.lock();
    }
    // Bounded, so that the stop flag is seen while every test runs on.
    finished_.wait_for(lock, std::chrono::milliseconds(50), [&] { return !done_.empty(); });
    if (on_wait_) {
      lock.unlock();
      on_wait_(false, busy);
      lock.lock();
    }
  }
  return collect(lock);
}

void CheckRunner::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (auto& [c, job] : inflight_) {
    job->cancel = true;
    job->cancelled = true;
    ++cancelling_;
  }
  inflight_.clear();
  while (cancelling_ > 0) {
    finished_.wait(lock, [&] { return !done_.empty(); });
    // Verdicts of work nobody waits for are dropped: the reduction may be over.
    for (auto& job : done_)
      if (job->cancelled) {
        --cancelling_;
        if (cancelled_by_pass_.size() <= job->pass) cancelled_by_pass_.resize(job->pass + 1, 0);
        ++cancelled_by_pass_[job->pass];
      }
    done_.clear();
  }
}

}  // namespace reduce::detail
