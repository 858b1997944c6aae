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

namespace reduce::cluster {

struct Envelope {
  int peer = 0;  // the sender (received) or the receiver (sent)
  int tag = 0;
  std::string bytes;
};

class MpiLink {
 public:
  // Initializes MPI. A worker rank (rank > 0) also sends rank 0 a heartbeat every `heartbeat`,
  // from the link's thread, so rank 0 can tell a busy worker from a dead one.
  static std::unique_ptr<MpiLink> start(std::chrono::milliseconds heartbeat);
  // Sends what is queued (waiting at most a few seconds for ranks that may be gone), then finalizes MPI.
  ~MpiLink();

  // A rank of the job died: MPI_Finalize would wait for it forever (Open MPI 4.1's closing fence
  // counts every rank, even under --enable-recovery), so this one ends without it.
  void skip_finalize() { finalize_.store(false); }

  int rank() const { return rank_; }
  int size() const { return size_; }

  void send(int peer, int tag, std::string bytes);
  // The next message received, waiting at most `wait`.
  std::optional<Envelope> receive(std::chrono::milliseconds wait);

 private:
  MpiLink() = default;
  void run();

  int rank_ = 0, size_ = 1;
  std::chrono::milliseconds heartbeat_{0};
  std::mutex mutex_;
  std::condition_variable received_;
  std::deque<Envelope> outgoing_, incoming_;
  bool stopping_ = false;
  std::atomic<bool> finalize_{true};
  std::thread thread_;
};

}  // namespace reduce::cluster
