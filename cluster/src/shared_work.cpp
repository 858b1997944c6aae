// Batch work over ranks: rank 0's listener answers requests and watches heartbeats while its own
// thread reduces items too; workers ask, reduce, report, until rank 0 has nothing left or is gone.
#include "cluster/shared_work.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace reduce::cluster {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kListenPeriod = std::chrono::milliseconds(100);
// Tries per item: a second rank may be lost for another reason than the item, a third is unlikely.
constexpr int kMaxAttempts = 2;

// A worker: asks, works, reports, until there is nothing left; then waits for rank 0's stop, which
// says whether a rank was lost (MpiLink::skip_finalize). False when rank 0 fell silent.
bool ask_for_work(MpiLink& link, const SharedWork& job, std::chrono::milliseconds rank_timeout) {
  auto rank_zero_silent = [&] { return Clock::now() - link.heard(0) > rank_timeout; };
  bool asking = true;
  while (true) {
    if (asking) link.send(0, kWant, {});
    std::optional<std::optional<Attempt>> answer;
    while (!answer) {
      auto e = link.receive(kListenPeriod);
      if (rank_zero_silent()) return false;
      if (!e || e->peer != 0) continue;
      if (e->tag == kStop) {
        if (decode_stop(e->bytes)) link.skip_finalize();
        return true;
      }
      if (e->tag == kWork)
        if (auto work = decode_work(e->bytes)) answer = std::move(*work);
    }
    if (!*answer) {
      asking = false;
      continue;
    }
    const Attempt& attempt = **answer;
    // The attempt runs on this thread; a watcher stops it when rank 0 falls silent meanwhile.
    std::stop_source gone;
    std::jthread watcher([&](std::stop_token done) {
      while (!done.stop_requested() && !rank_zero_silent()) std::this_thread::sleep_for(kListenPeriod);
      if (!done.stop_requested()) gone.request_stop();
    });
    const std::string status = job.work(attempt, gone.get_token());
    watcher.request_stop();
    watcher.join();
    if (gone.stop_requested()) return false;
    link.send(0, kDone, encode_done(attempt, status));
  }
}

struct Rank {
  bool asking = false;              // asked, not answered yet (the queue was empty)
  std::optional<Attempt> running;   // handed out, no result yet
  bool finished = false;            // told there is nothing left
  bool dropped = false;
};

// Rank 0's side, every member under `mutex`.
class Dispatch {
 public:
  Dispatch(MpiLink& link, const SharedWork& job, std::chrono::milliseconds rank_timeout,
           const std::function<void(const std::string&)>& log, std::stop_token stop)
      : link_(link), job_(job), rank_timeout_(rank_timeout), log_(log), stop_(std::move(stop)),
        ranks_(static_cast<size_t>(link.size())), attempts_(job.count) {
    out_.results.resize(job.count);
    out_.lost_ranks.resize(job.count);
    for (size_t i = 0; i < job.count; ++i) queue_.push_back(i);
  }

  // The listener: until every rank has finished or was dropped (and rank 0's own thread is done).
  void listen() {
    while (true) {
      auto e = link_.receive(kListenPeriod);
      std::lock_guard<std::mutex> lock(mutex_);
      if (e) handle(*e);
      drop_silent();
      answer_askers();
      changed_.notify_all();
      if (local_done_ && all_finished()) return stop_ranks();
    }
  }

  // Rank 0's own thread: items from the queue until it is empty and no other rank holds an item
  // that could come back to it (its rank lost).
  void work_locally() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      std::optional<Attempt> a = take();
      if (!a) {
        if (stop_.stop_requested() || !remote_running()) break;
        changed_.wait_for(lock, kListenPeriod);
        continue;
      }
      lock.unlock();
      const std::string status = job_.work(*a, {});
      lock.lock();
      out_.results[a->item] = job_.accept(*a, status);
    }
    local_done_ = true;
  }

  WorkResults results() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(out_);
  }

 private:
  void handle(const Envelope& e) {
    if (e.peer <= 0 || e.peer >= link_.size()) return;
    Rank& r = ranks_[static_cast<size_t>(e.peer)];
    if (r.dropped) return;  // its item went elsewhere: a late result must not count
    if (e.tag == kWant) {
      r.asking = true;
    } else if (e.tag == kDone) {
      auto done = decode_done(e.bytes);
      // Only the attempt this rank holds: anything else is a bug or a foreign sender.
      if (!done || !r.running || !(done->first == *r.running)) return;
      out_.results[r.running->item] = job_.accept(*r.running, done->second);
      r.running.reset();
    }
  }

  void drop_silent() {
    const auto now = Clock::now();
    for (size_t k = 1; k < ranks_.size(); ++k) {
      Rank& r = ranks_[k];
      if (r.finished || r.dropped || now - link_.heard(static_cast<int>(k)) <= rank_timeout_) continue;
      r.dropped = true;
      ++out_.ranks_lost;
      std::string what;
      if (r.running) {
        const size_t item = r.running->item;
        out_.lost_ranks[item].push_back(static_cast<int>(k));
        if (attempts_[item] < kMaxAttempts && !stop_.stop_requested()) {
          queue_.push_front(item);
          what = "; its model goes to another rank";
        } else {
          out_.results[item] = job_.lost;
          what = "; its model is marked " + job_.lost;
        }
        r.running.reset();
      }
      log_("cluster: rank " + std::to_string(k) + " dropped (no word for " + std::to_string(rank_timeout_.count()) +
           " ms)" + what);
    }
  }

  // Ranks that asked get the next item; once nothing is left that a lost rank could send back to
  // the queue, they are told to stop asking.
  void answer_askers() {
    for (size_t k = 1; k < ranks_.size(); ++k) {
      Rank& r = ranks_[k];
      if (!r.asking || r.dropped) continue;
      if (auto a = take()) {
        r.running = std::move(a);
      } else if (stop_.stop_requested() || !remote_running()) {
        r.finished = true;
      } else {
        continue;
      }
      r.asking = false;
      link_.send(static_cast<int>(k), kWork, encode_work(r.running));
    }
  }

  std::optional<Attempt> take() {
    if (stop_.stop_requested() || queue_.empty()) return std::nullopt;
    const size_t item = queue_.front();
    queue_.pop_front();
    const int number = ++attempts_[item];
    return Attempt{item, number, job_.prepare(item, number)};
  }

  bool remote_running() const {
    for (size_t k = 1; k < ranks_.size(); ++k)
      if (ranks_[k].running) return true;
    return false;
  }

  bool all_finished() const {
    for (size_t k = 1; k < ranks_.size(); ++k)
      if (!ranks_[k].finished && !ranks_[k].dropped) return false;
    return true;
  }

  void stop_ranks() {
    const bool lost = out_.ranks_lost > 0;
    for (size_t k = 1; k < ranks_.size(); ++k) link_.send(static_cast<int>(k), kStop, encode_stop(lost));
    if (lost) link_.skip_finalize();
  }

  MpiLink& link_;
  const SharedWork& job_;
  const std::chrono::milliseconds rank_timeout_;
  const std::function<void(const std::string&)>& log_;
  std::stop_token stop_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Rank> ranks_;  // by rank; rank 0's entry unused
  std::deque<size_t> queue_;
  std::vector<int> attempts_;  // per item: attempts handed out
  bool local_done_ = false;
  WorkResults out_;
};

}  // namespace

WorkResults share_work(MpiLink& link, const SharedWork& job, std::chrono::milliseconds rank_timeout,
                       const std::function<void(const std::string&)>& log, std::stop_token stop) {
  if (link.rank() > 0) {
    WorkResults out;
    out.rank_zero_lost = !ask_for_work(link, job, rank_timeout);
    // Rank 0 would never join MPI_Finalize's closing fence.
    if (out.rank_zero_lost) link.skip_finalize();
    return out;
  }
  Dispatch dispatch(link, job, rank_timeout, log, std::move(stop));
  std::thread listener([&] { dispatch.listen(); });
  dispatch.work_locally();
  listener.join();
  return dispatch.results();
}

}  // namespace reduce::cluster
