// Parallel, order-preserving candidate testing with a verdict memo (see check_runner.h).
#include "check_runner.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <iterator>
#include <map>
#include <thread>

namespace reduce::detail {

struct CheckRunner::Job {
  Candidate candidate;
  std::atomic<bool> cancel{false};
  bool background = false;  // started by speculate() and not (or no longer) asked for
  size_t order = 0;         // start order
  TestResult result;
};

CheckRunner::CheckRunner(CandidateTest& test, size_t node_count, int jobs, const std::atomic<bool>* stop,
                         std::function<void(const Candidate&, TestOutcome, bool)> on_verdict,
                         std::function<void(bool, size_t)> on_wait)
    : test_(test),
      node_count_(node_count),
      jobs_(std::max(1, jobs)),
      stop_(stop),
      on_verdict_(std::move(on_verdict)),
      on_wait_(std::move(on_wait)) {
  // Tests mostly wait (engines in other processes, devices): allow more threads than cores, so
  // that `jobs` tests really are in flight, and give them an arena of their own.
  const size_t wanted = static_cast<size_t>(jobs_) + 1;
  if (wanted > tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism))
    parallelism_ = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, wanted);
  arena_ = std::make_unique<tbb::task_arena>(jobs_, 0);
}

CheckRunner::~CheckRunner() { drain(); }

bool CheckRunner::well_formed(const Candidate& c) const {
  if (c.nodes.empty()) return false;
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    if (c.nodes[i] >= node_count_) return false;
    if (i > 0 && c.nodes[i] <= c.nodes[i - 1]) return false;
  }
  return std::is_sorted(c.frozen.begin(), c.frozen.end());
}

void CheckRunner::record(const Candidate& c, TestOutcome outcome, bool cache_hit) {
  if (outcome == TestOutcome::Cancelled) {
    ++counts_.cancelled;
    return;
  }
  ++counts_.checks;
  if (cache_hit) ++counts_.cache_hits;
  if (outcome == TestOutcome::Slipped) ++counts_.slipped;
  if (outcome == TestOutcome::Invalid) ++counts_.invalid;
  if (on_verdict_) on_verdict_(c, outcome, cache_hit);
}

std::optional<size_t> CheckRunner::first_interesting(size_t count, const CandidateMaker& make) {
  const auto res = run(count, make, true);
  for (size_t i = 0; i < res.size(); ++i) {
    if (res[i] == 1) return i;
    if (res[i] != 0) break;
  }
  return std::nullopt;
}

std::optional<bool> CheckRunner::known_interesting(const Candidate& c) const {
  auto it = memo_.find(c);
  if (it == memo_.end()) {
    if (dry_run_.sink && (dry_run_.seen.count(c) || dry_run_.sink->size() >= dry_run_.limit)) return false;
    return std::nullopt;
  }
  return it->second == TestOutcome::Interesting;
}

std::vector<bool> CheckRunner::all_interesting(size_t count, const CandidateMaker& make) {
  const auto res = run(count, make, false);
  std::vector<bool> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = res[i] == 1;
  return out;
}

std::shared_ptr<CheckRunner::Job> CheckRunner::launch(Candidate c, bool background) {
  auto job = std::make_shared<Job>();
  job->candidate = std::move(c);
  job->background = background;
  job->order = launched_++;
  inflight_.emplace(job->candidate, job);
  arena_->enqueue([this, job] {
    try {
      job->result = test_.test(job->candidate, job->cancel);
    } catch (const std::exception&) {
      job->result = TestResult{TestOutcome::Invalid, false, {}};
    }
    std::lock_guard<std::mutex> g(mutex_);
    done_.push_back(job);
    finished_.notify_all();
  });
  return job;
}

std::vector<std::shared_ptr<CheckRunner::Job>> CheckRunner::collect(std::unique_lock<std::mutex>& lock) {
  auto finished = std::move(done_);
  done_.clear();
  lock.unlock();
  for (auto& job : finished) {
    if (auto it = inflight_.find(job->candidate); it != inflight_.end() && it->second == job) inflight_.erase(it);
    else --cancelling_;
    record(job->candidate, job->result.outcome, job->result.cache_hit);
    if (job->result.outcome != TestOutcome::Cancelled) memo_.emplace(job->candidate, job->result.outcome);
    if (job->result.outcome == TestOutcome::Interesting && !job->result.failing_outputs.empty())
      failing_.emplace(job->candidate, std::move(job->result.failing_outputs));
  }
  lock.lock();
  return finished;
}

CheckRunner::Inflight::iterator CheckRunner::cancel(Inflight::iterator it) {
  it->second->cancel = true;
  ++cancelling_;
  return inflight_.erase(it);
}

bool CheckRunner::cancel_latest_background(const std::unordered_set<Candidate>& keep) {
  auto latest = inflight_.end();
  for (auto it = inflight_.begin(); it != inflight_.end(); ++it)
    if (it->second->background && !keep.count(it->first) &&
        (latest == inflight_.end() || it->second->order > latest->second->order))
      latest = it;
  if (latest == inflight_.end()) return false;
  cancel(latest);
  return true;
}

void CheckRunner::speculate(const std::vector<Candidate>& candidates, bool replace) {
  if (dry_run_.sink) return;
  std::unique_lock<std::mutex> lock(mutex_);
  collect(lock);
  lock.unlock();
  if (stop_ && stop_->load()) stopped_ = true;
  if (stopped_) return;
  const std::unordered_set<Candidate> wanted(candidates.begin(), candidates.end());
  for (auto it = inflight_.begin(); it != inflight_.end();)
    it = replace && it->second->background && !wanted.count(it->first) ? cancel(it) : std::next(it);
  if (replace) queued_.clear();
  for (const auto& c : candidates) {
    if (memo_.count(c) || inflight_.count(c) || !well_formed(c)) continue;
    if (busy() < static_cast<size_t>(jobs_)) launch(c, true);
    else if (replace) queued_.push_back(c);
    else break;
  }
}

void CheckRunner::launch_queued() {
  while (!dry_run_.sink && !stopped_ && busy() < static_cast<size_t>(jobs_) && !queued_.empty()) {
    Candidate c = std::move(queued_.front());
    queued_.pop_front();
    if (!memo_.count(c) && !inflight_.count(c)) launch(std::move(c), true);
  }
}

void CheckRunner::start(const std::vector<Candidate>& candidates) {
  if (dry_run_.sink || candidates.empty()) return;
  std::unique_lock<std::mutex> lock(mutex_);
  collect(lock);
  if (stop_ && stop_->load()) stopped_ = true;
  if (stopped_) return;
  const std::unordered_set<Candidate> listed(candidates.begin(), candidates.end());
  std::vector<const Candidate*> todo;
  std::unordered_set<Candidate> seen;
  for (const auto& c : candidates)
    if (!memo_.count(c) && !inflight_.count(c) && well_formed(c) && seen.insert(c).second) todo.push_back(&c);
  // Cancel at once as many unlisted background tests as the new ones need slots (latest first).
  const size_t free = busy() < static_cast<size_t>(jobs_) ? jobs_ - busy() : 0;
  for (size_t need = todo.size(); need > free && cancel_latest_background(listed);) --need;
  for (size_t k = 0; k < todo.size();) {
    if (busy() < static_cast<size_t>(jobs_)) {
      launch(*todo[k++], true);
      continue;
    }
    if (cancelling_ == 0) break;  // the slots hold tests the reduction needs
    finished_.wait(lock, [&] { return !done_.empty(); });
    collect(lock);
    if (stop_ && stop_->load()) stopped_ = true;
    if (stopped_) break;
  }
  launch_queued();
}

void CheckRunner::drain() {
  queued_.clear();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!inflight_.empty()) cancel(inflight_.begin());
  while (cancelling_ > 0) {
    finished_.wait(lock, [&] { return !done_.empty(); });
    // Verdicts of work nobody waits for are dropped: the reduction may be over.
    cancelling_ -= done_.size();
    done_.clear();
  }
}

void CheckRunner::wait_for_a_test(std::unique_lock<std::mutex>& lock) {
  if (!done_.empty()) return;
  // The observer runs without the lock: tests ending meanwhile are seen by the wait below.
  const size_t running = busy();
  if (on_wait_) {
    lock.unlock();
    on_wait_(true, running);
    lock.lock();
  }
  finished_.wait_for(lock, std::chrono::milliseconds(20), [&] { return !done_.empty(); });
  if (on_wait_) {
    lock.unlock();
    on_wait_(false, running);
    lock.lock();
  }
}

// res[i]: -1 unknown, 0 not interesting, 1 interesting. With stop_at_first, the scan ends once
// every candidate before the first interesting one is known; later jobs are cancelled.
std::vector<signed char> CheckRunner::run(size_t count, const CandidateMaker& make, bool stop_at_first) {
  std::vector<signed char> res(count, -1);
  if (stopped_) return std::vector<signed char>(count, 0);
  struct Wait {
    size_t index;
    std::shared_ptr<Job> job;
    bool adopted;  // a background test this call found running
  };
  std::vector<Wait> waiting;
  std::optional<std::pair<size_t, Candidate>> pending;  // built, waiting for a free slot
  size_t next = 0;                 // next candidate to build
  size_t frontier = 0;             // every candidate before it is known not interesting
  size_t first_success = count;    // lowest index known interesting

  auto settle = [&](size_t i, TestOutcome outcome) {
    res[i] = outcome == TestOutcome::Interesting ? 1 : 0;
    if (res[i] == 1) first_success = std::min(first_success, i);
  };
  // Stops waiting for entries matching `drop`; tests this call started are cancelled.
  auto release = [&](const std::function<bool(const Wait&)>& drop) {
    std::vector<Wait> keep, dropped;
    for (auto& w : waiting) (drop(w) ? dropped : keep).push_back(std::move(w));
    waiting = std::move(keep);
    for (auto& w : dropped) {
      res[w.index] = 0;  // its answer no longer matters
      const bool still = std::any_of(waiting.begin(), waiting.end(), [&](const Wait& k) { return k.job == w.job; });
      if (still) continue;
      if (w.adopted && !stopped_) {
        w.job->background = true;
        continue;
      }
      if (auto it = inflight_.find(w.job->candidate); it != inflight_.end() && it->second == w.job) cancel(it);
    }
  };

  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    if (stop_ && stop_->load()) stopped_ = true;
    while (!stopped_) {
      if (!pending) {
        if (next >= count || (stop_at_first && next >= first_success)) break;
        if (dry_run_.sink && dry_run_.sink->size() >= dry_run_.limit) {
          for (; next < count; ++next) res[next] = 0;
          break;
        }
        const size_t i = next++;
        std::optional<Candidate> c = make(i);
        if (!c) { res[i] = 0; continue; }
        if (!well_formed(*c)) { ++malformed_; res[i] = 0; continue; }
        if (auto m = memo_.find(*c); m != memo_.end()) {
          if (!dry_run_.sink) record(*c, m->second, true);
          settle(i, m->second);
          continue;
        }
        if (dry_run_.sink) {
          if (dry_run_.seen.insert(*c).second) dry_run_.sink->push_back(std::move(*c));
          res[i] = 0;
          continue;
        }
        if (auto it = inflight_.find(*c); it != inflight_.end()) {
          const bool adopted = it->second->background;
          it->second->background = false;
          waiting.push_back({i, it->second, adopted});
          continue;
        }
        pending.emplace(i, std::move(*c));
      }
      // Tests asked for go first: background work gives up its slot.
      if (inflight_.size() >= static_cast<size_t>(jobs_)) cancel_latest_background();
      if (busy() >= static_cast<size_t>(jobs_)) break;
      waiting.push_back({pending->first, launch(std::move(pending->second), false), false});
      pending.reset();
    }
    while (frontier < count && res[frontier] == 0) ++frontier;
    const bool decided = stop_at_first && frontier < count && res[frontier] == 1;
    if (stopped_) {
      release([](const Wait&) { return true; });
      pending.reset();
      while (!inflight_.empty()) cancel(inflight_.begin());
    } else if (decided) {
      pending.reset();
      release([&](const Wait& w) { return w.index > frontier; });
    }
    if (waiting.empty()) {
      // Everything launched is settled: done, unless more candidates remain to be launched.
      if (decided || stopped_ || (next >= count && !pending)) break;
      if (!pending) continue;
    }
    // Slots this call leaves free take queued background work while it waits.
    if (!pending && !stopped_) launch_queued();
    wait_for_a_test(lock);
    for (const auto& job : collect(lock)) {
      for (auto it = waiting.begin(); it != waiting.end();)
        if (it->job == job) {
          if (job->result.outcome == TestOutcome::Cancelled) res[it->index] = 0;
          else settle(it->index, job->result.outcome);
          it = waiting.erase(it);
        } else {
          ++it;
        }
    }
  }
  lock.unlock();
  if (stopped_)
    for (auto& r : res)
      if (r == -1) r = 0;
  return res;
}

}  // namespace reduce::detail
