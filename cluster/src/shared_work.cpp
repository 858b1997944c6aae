// Batch work over ranks: rank 0's listener answers requests and watches heartbeats while its own
// thread reduces models too; workers ask, reduce, report, until rank 0 has nothing left.
#include "cluster/shared_work.h"

#include <deque>
#include <limits>
#include <mutex>
#include <thread>

#include "cluster/messages.h"

namespace reduce::cluster {

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();

// A worker: asks, works, reports, until there is nothing left; then waits for rank 0's stop, which
// says whether a rank was lost (MpiLink::skip_finalize).
void ask_for_work(MpiLink& link, const std::function<std::string(size_t)>& work) {
  bool asking = true;
  while (true) {
    if (asking) link.send(0, kWant, {});
    std::optional<uint64_t> item;
    while (!item) {
      auto e = link.receive(std::chrono::milliseconds(100));
      if (!e || e->peer != 0) continue;
      if (e->tag == kStop) {
        if (decode_stop(e->bytes)) link.skip_finalize();
        return;
      }
      if (e->tag == kWork)
        if (auto id = decode_id(e->bytes)) item = *id;
    }
    if (*item == kNone) {
      asking = false;
      continue;
    }
    link.send(0, kDone, encode_done(*item, work(static_cast<size_t>(*item))));
  }
}

struct Rank {
  Clock::time_point heard = Clock::now();
  std::optional<size_t> running;
  bool finished = false;  // told there is nothing left
  bool dropped = false;
};

}  // namespace

WorkResults share_work(MpiLink& link, size_t count, const std::function<std::string(size_t)>& work,
                       std::chrono::milliseconds rank_timeout, const std::string& lost,
                       const std::function<void(const std::string&)>& log, std::stop_token stop) {
  if (link.rank() > 0) {
    ask_for_work(link, work);
    return {};
  }
  WorkResults out;
  out.results.resize(count);
  std::mutex mutex;
  std::deque<size_t> queue;
  for (size_t i = 0; i < count; ++i) queue.push_back(i);
  std::vector<Rank> ranks(static_cast<size_t>(link.size()));
  bool local_done = false;
  auto next = [&]() -> std::optional<size_t> {
    if (stop.stop_requested() || queue.empty()) return std::nullopt;
    const size_t i = queue.front();
    queue.pop_front();
    return i;
  };
  std::thread listener([&] {
    while (true) {
      auto e = link.receive(std::chrono::milliseconds(100));
      std::lock_guard<std::mutex> lock(mutex);
      const auto now = Clock::now();
      if (e && e->peer > 0 && e->peer < link.size() && !ranks[static_cast<size_t>(e->peer)].dropped) {
        Rank& r = ranks[static_cast<size_t>(e->peer)];
        r.heard = now;
        if (e->tag == kWant) {
          r.running = next();
          r.finished = !r.running;
          link.send(e->peer, kWork, encode_id(r.running ? *r.running : kNone));
        } else if (e->tag == kDone) {
          if (auto done = decode_done(e->bytes); done && done->first < out.results.size()) out.results[done->first] = done->second;
          r.running.reset();
        }
      }
      bool all_done = local_done;
      for (size_t k = 1; k < ranks.size(); ++k) {
        Rank& r = ranks[k];
        if (!r.finished && !r.dropped && now - r.heard > rank_timeout) {
          r.dropped = true;
          if (r.running) out.results[*r.running] = lost;
          log("cluster: rank " + std::to_string(k) + " dropped (no word for " + std::to_string(rank_timeout.count()) +
              " ms)" + (r.running ? "; its model is marked " + lost : ""));
        }
        all_done = all_done && (r.finished || r.dropped);
      }
      if (all_done) {
        bool lost = false;
        for (size_t k = 1; k < ranks.size(); ++k) lost = lost || ranks[k].dropped;
        for (size_t k = 1; k < ranks.size(); ++k) link.send(static_cast<int>(k), kStop, encode_stop(lost));
        if (lost) link.skip_finalize();
        return;
      }
    }
  });
  while (true) {
    std::optional<size_t> i;
    {
      std::lock_guard<std::mutex> lock(mutex);
      i = next();
      if (!i) local_done = true;
    }
    if (!i) break;
    std::string status = work(*i);
    std::lock_guard<std::mutex> lock(mutex);
    out.results[*i] = std::move(status);
  }
  listener.join();
  return out;
}

}  // namespace reduce::cluster
