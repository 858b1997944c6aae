// Rank 0's side of distributed checks: one listener thread keeps the workers' state from their
// messages; reducer threads wait for their own check's answer.
#include "cluster/cluster_checks.h"

#include "cluster/messages.h"

namespace reduce::cluster {

namespace {
using Clock = std::chrono::steady_clock;
constexpr auto kListenPeriod = std::chrono::milliseconds(100);
constexpr auto kCancelPoll = std::chrono::milliseconds(20);
}  // namespace

ClusterChecks::ClusterChecks(MpiLink& link, std::chrono::milliseconds rank_timeout,
                             std::function<void(const std::string&)> log)
    : link_(link), rank_timeout_(rank_timeout), log_(std::move(log)), workers_(static_cast<size_t>(link.size())) {
  // Silence is counted from the link's start (MpiLink::heard): a worker still loading the model
  // sends heartbeats all the same.
  listener_ = std::thread([this] { listen(); });
}

ClusterChecks::~ClusterChecks() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    // Dropped ranks too: one that was only slow ends with the others (a dead one never takes it).
    for (size_t r = 1; r < workers_.size(); ++r) link_.send(static_cast<int>(r), kStop, encode_stop(silent_lost_));
    if (silent_lost_) link_.skip_finalize();
  }
  listener_.join();
}

void ClusterChecks::expect_model(uint64_t model_nodes, int local_slots) {
  std::unique_lock<std::mutex> lock(mutex_);
  model_nodes_ = model_nodes;
  local_slots_ = local_slots;
  // The workers load the model as this rank just did: waiting for their greetings (at most the
  // rank timeout) lets the first checks go to them too, instead of a short reduction ending alone.
  answered_.wait_for(lock, rank_timeout_, [this] {
    for (size_t r = 1; r < workers_.size(); ++r)
      if (!workers_[r].greeted && !workers_[r].dropped) return false;
    return true;
  });
}

void ClusterChecks::listen() {
  while (true) {
    auto e = link_.receive(kListenPeriod);
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    if (e) handle(*e);
    const auto now = Clock::now();
    for (size_t r = 1; r < workers_.size(); ++r)
      if (!workers_[r].dropped && now - link_.heard(static_cast<int>(r)) > rank_timeout_)
        drop(static_cast<int>(r), "no word for " + std::to_string(rank_timeout_.count()) + " ms", true);
  }
}

void ClusterChecks::handle(const Envelope& e) {
  if (e.peer <= 0 || e.peer >= static_cast<int>(workers_.size())) return;
  Worker& w = workers_[static_cast<size_t>(e.peer)];
  if (w.dropped) return;  // a worker once dropped stays dropped: its checks went elsewhere
  if (e.tag == kHello) {
    auto hello = decode_hello(e.bytes);
    w.greeted = true;
    if (!hello) return drop(e.peer, hello.error().message());
    if (!hello->ready) return drop(e.peer, hello->error);
    w.ready = true;
    w.slots = hello->slots;
    w.model_nodes = hello->model_nodes;
    answered_.notify_all();
  } else if (e.tag == kVerdict) {
    auto answer = decode_verdict(e.bytes);
    if (!answer) return drop(e.peer, answer.error().message());
    auto it = checks_.find(answer->first);
    if (it == checks_.end() || it->second.rank != e.peer) return;
    --w.busy;
    ++answered_checks_;
    if (it->second.abandoned) checks_.erase(it);
    else it->second.verdict = std::move(answer->second);
    answered_.notify_all();
  }
}

void ClusterChecks::drop(int rank, const std::string& why, bool silent) {
  Worker& w = workers_[static_cast<size_t>(rank)];
  w.dropped = true;
  ++lost_;
  silent_lost_ = silent_lost_ || silent;
  int requeued = 0;
  for (auto it = checks_.begin(); it != checks_.end();) {
    if (it->second.rank != rank) {
      ++it;
    } else if (it->second.abandoned) {
      it = checks_.erase(it);
    } else {
      it->second.lost = true, ++requeued;
      ++it;
    }
  }
  log_("cluster: rank " + std::to_string(rank) + " dropped (" + why + "); " + std::to_string(requeued) +
       " check(s) go to other ranks");
  answered_.notify_all();
}

int ClusterChecks::free_worker() const {
  if (!model_nodes_) return -1;
  int best = -1;
  for (size_t r = 1; r < workers_.size(); ++r) {
    const Worker& w = workers_[r];
    if (!w.ready || w.dropped || w.busy >= w.slots) continue;
    if (best < 0 || w.busy < workers_[static_cast<size_t>(best)].busy) best = static_cast<int>(r);
  }
  return best;
}

std::optional<Verdict> ClusterChecks::evaluate(const Candidate& candidate, const std::atomic<bool>& cancel) {
  std::unique_lock<std::mutex> lock(mutex_);
  // Rank 0 may greet workers before its own model is loaded: models are compared here.
  for (size_t r = 1; r < workers_.size() && model_nodes_; ++r) {
    const Worker& w = workers_[r];
    if (w.ready && !w.dropped && w.model_nodes != model_nodes_)
      drop(static_cast<int>(r), "its model has " + std::to_string(w.model_nodes) + " nodes, rank 0's " +
                                    std::to_string(model_nodes_));
  }
  while (!cancel.load() && !stopping_) {
    const int rank = free_worker();
    if (rank < 0) return std::nullopt;
    const uint64_t id = next_id_++;
    checks_[id].rank = rank;
    ++workers_[static_cast<size_t>(rank)].busy;
    link_.send(rank, kCheck, encode_check(id, candidate));
    // The reducer's cancel flag notifies nobody: it is polled, as TargetGate does.
    while (!answered_.wait_for(lock, kCancelPoll, [&] {
      const Check& c = checks_.at(id);
      return c.verdict || c.lost || cancel.load();
    })) {
    }
    Check& c = checks_.at(id);
    if (c.verdict) {
      Verdict v = std::move(*c.verdict);
      checks_.erase(id);
      return v;
    }
    if (c.lost) {
      checks_.erase(id);
      continue;
    }
    // Cancelled: the worker kills the engine run and answers, which frees its slot.
    c.abandoned = true;
    link_.send(rank, kCancel, encode_id(id));
  }
  Verdict v;
  v.cancelled = true;
  return v;
}

int ClusterChecks::ranks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int n = 1;
  for (size_t r = 1; r < workers_.size(); ++r) n += workers_[r].ready ? 1 : 0;
  return n;
}

int ClusterChecks::slots() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int n = local_slots_;
  for (size_t r = 1; r < workers_.size(); ++r) n += workers_[r].ready ? workers_[r].slots : 0;
  return n;
}

int ClusterChecks::lost() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lost_;
}

uint64_t ClusterChecks::answered() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return answered_checks_;
}

}  // namespace reduce::cluster
