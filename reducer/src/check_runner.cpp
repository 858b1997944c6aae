// Parallel, order-preserving candidate testing with a verdict memo (see check_runner.h).
#include "check_runner.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <map>
#include <thread>

namespace reduce::detail {

namespace {
size_t mix(size_t seed, size_t v) { return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)); }
size_t hash_string(const std::string& s) { return std::hash<std::string>{}(s); }
}  // namespace

size_t CandidateHash::operator()(const Candidate& c) const {
  size_t h = c.nodes.size();
  for (size_t n : c.nodes) h = mix(h, n);
  for (const auto& f : c.frozen) h = mix(h, hash_string(f));
  h = mix(h, 0xf00d);
  for (const auto& o : c.outputs) h = mix(h, hash_string(o));
  for (const auto& [name, shape] : c.input_shapes) {
    h = mix(h, hash_string(name));
    for (int64_t d : shape) h = mix(h, static_cast<size_t>(d));
  }
  return h;
}

struct CheckRunner::Job {
  size_t index = 0;
  Candidate candidate;
  std::atomic<bool> cancel{false};
  TestResult result;
};

CheckRunner::CheckRunner(CandidateTest& test, size_t node_count, int jobs, const std::atomic<bool>* stop,
                         std::function<void(const Candidate&, TestOutcome, bool)> on_verdict)
    : test_(test), node_count_(node_count), jobs_(std::max(1, jobs)), stop_(stop), on_verdict_(std::move(on_verdict)) {
  // Tests mostly wait (engines in other processes, devices): allow more threads than cores, so
  // that `jobs` tests really are in flight, and give them an arena of their own.
  const size_t wanted = static_cast<size_t>(jobs_) + 1;
  if (wanted > tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism))
    parallelism_ = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, wanted);
  arena_ = std::make_unique<tbb::task_arena>(jobs_, 0);
}

CheckRunner::~CheckRunner() = default;

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
    if (dry_ && dry_seen_.count(c)) return false;
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

// res[i]: -1 unknown, 0 not interesting, 1 interesting. With stop_at_first, the scan ends once
// every candidate before the first interesting one is known; later jobs are cancelled.
std::vector<signed char> CheckRunner::run(size_t count, const CandidateMaker& make, bool stop_at_first) {
  std::vector<signed char> res(count, -1);
  if (stopped_) return std::vector<signed char>(count, 0);
  std::map<size_t, std::shared_ptr<Job>> running;
  size_t next = 0;                 // next candidate to build
  size_t frontier = 0;             // every candidate before it is known not interesting
  size_t first_success = count;    // lowest index known interesting

  auto settle = [&](size_t i, TestOutcome outcome) {
    res[i] = outcome == TestOutcome::Interesting ? 1 : 0;
    if (res[i] == 1) first_success = std::min(first_success, i);
  };
  auto collect = [&](std::unique_lock<std::mutex>& lock) {
    auto finished = std::move(done_);
    done_.clear();
    lock.unlock();
    for (auto& job : finished) {
      running.erase(job->index);
      record(job->candidate, job->result.outcome, job->result.cache_hit);
      if (job->result.outcome == TestOutcome::Cancelled) {
        res[job->index] = 0;  // only cancelled when its answer no longer matters
        continue;
      }
      memo_.emplace(job->candidate, job->result.outcome);
      settle(job->index, job->result.outcome);
    }
    lock.lock();
  };

  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    if (stop_ && stop_->load()) stopped_ = true;
    if (!stopped_) {
      while (running.size() < static_cast<size_t>(jobs_) && next < count && (!stop_at_first || next < first_success)) {
        const size_t i = next++;
        std::optional<Candidate> c = make(i);
        if (!c) { res[i] = 0; continue; }
        if (!well_formed(*c)) { ++malformed_; res[i] = 0; continue; }
        if (auto m = memo_.find(*c); m != memo_.end()) {
          if (!dry_) record(*c, m->second, true);
          settle(i, m->second);
          continue;
        }
        if (dry_) {
          if (dry_seen_.insert(*c).second) dry_->push_back(std::move(*c));
          res[i] = 0;
          continue;
        }
        auto job = std::make_shared<Job>();
        job->index = i;
        job->candidate = std::move(*c);
        running.emplace(i, job);
        arena_->enqueue([this, job] {
          try {
            job->result = test_.test(job->candidate, job->cancel);
          } catch (const std::exception&) {
            job->result = TestResult{TestOutcome::Invalid, false};
          }
          std::lock_guard<std::mutex> g(mutex_);
          done_.push_back(job);
          finished_.notify_all();
        });
      }
    }
    while (frontier < count && res[frontier] == 0) ++frontier;
    const bool decided = stop_at_first && frontier < count && res[frontier] == 1;
    if (decided || stopped_)
      for (auto& [i, job] : running)
        if (stopped_ || i > frontier) job->cancel = true;
    if (running.empty()) {
      // Everything launched is settled: done, unless more candidates remain to be launched.
      if (decided || stopped_ || next == count) break;
      continue;
    }
    finished_.wait_for(lock, std::chrono::milliseconds(20), [&] { return !done_.empty(); });
    collect(lock);
  }
  lock.unlock();
  if (stopped_)
    for (auto& r : res)
      if (r == -1) r = 0;
  return res;
}

}  // namespace reduce::detail
