// MpiLink: this process's place in an MPI job (mpirun, srun). It initializes MPI, and from then on
// every MPI call runs on the link's own thread: callers queue messages and take received ones, so
// engines, the reducer's threads and Ctrl-C never block inside MPI.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace reduce::cluster {

struct Envelope {
  int peer = 0;  // the sender (received) or the receiver (sent)
  int tag = 0;
  std::string bytes;
};

class MpiLink {
 public:
  // Initializes MPI. From the link's thread, every `heartbeat`, a worker rank (rank > 0) sends rank
  // 0 a heartbeat, so rank 0 can tell a busy worker from a dead one, and rank 0 sends one to every
  // worker, so a worker can tell that rank 0 is gone. A peer gets its next heartbeat only once MPI
  // is done with the last one: sends to a dead or frozen rank stop piling up.
  static std::unique_ptr<MpiLink> start(std::chrono::milliseconds heartbeat);
  // Sends what is queued (waiting at most a few seconds for ranks that may be gone), then finalizes MPI.
  ~MpiLink();

  // A rank of the job died: MPI_Finalize would wait for it forever (Open MPI 4.1's closing fence
  // counts every rank, even under --enable-recovery), so this one ends without it.
  void skip_finalize() { finalize_.store(false); }

  int rank() const { return rank_; }
  int size() const { return size_; }

  void send(int peer, int tag, std::string bytes);
  // The next message received, waiting at most `wait`. Heartbeats are not passed on: they only
  // count for heard().
  std::optional<Envelope> receive(std::chrono::milliseconds wait);
  // When a message (a heartbeat or any other) from `peer` last arrived; before the first, when the
  // link started. Silence counts only while the link's thread runs: after this process was stopped
  // (SIGSTOP, a suspended VM) every peer starts afresh, since what they sent meanwhile is not read yet.
  std::chrono::steady_clock::time_point heard(int peer) const;

 private:
  MpiLink() = default;
  void run();

  int rank_ = 0, size_ = 1;
  std::chrono::milliseconds heartbeat_{0};
  mutable std::mutex mutex_;
  std::vector<std::chrono::steady_clock::time_point> heard_;  // by rank
  std::chrono::steady_clock::time_point looped_;  // the link's thread's last turn
  std::vector<int> heartbeat_peers_;  // set at start
  std::condition_variable received_;
  std::deque<Envelope> outgoing_, incoming_;
  bool stopping_ = false;
  std::atomic<bool> finalize_{true};
  std::thread thread_;
};

}  // namespace reduce::cluster
