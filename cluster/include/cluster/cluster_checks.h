// ClusterChecks: rank 0's RemoteChecks. Hands candidates to free worker ranks, forwards
// cancellation, and drops a worker that stops answering (its checks go to another rank or run
// locally), so a reduction ends with whatever ranks are left.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/mpi_link.h"
#include "session/remote_checks.h"

namespace reduce::cluster {

class ClusterChecks : public RemoteChecks {
 public:
  // Starts listening to the workers at once (their greetings and heartbeats). A worker silent for
  // `rank_timeout` is dropped. `log` receives one line per dropped or refused worker.
  ClusterChecks(MpiLink& link, std::chrono::milliseconds rank_timeout, std::function<void(const std::string&)> log);
  // Tells every worker that is left to stop.
  ~ClusterChecks() override;

  // Workers get checks only once this rank's model is known, and only if theirs has as many nodes.
  // Waits until every worker has greeted or was dropped, at most the rank timeout.
  void expect_model(uint64_t model_nodes, int local_slots);

  std::optional<Verdict> evaluate(const Candidate& candidate, const std::atomic<bool>& cancel) override;
  int ranks() const override;
  int slots() const override;
  int lost() const override;
  uint64_t answered() const override;

 private:
  struct Worker {
    bool greeted = false, ready = false, dropped = false;
    int slots = 0, busy = 0;
    uint64_t model_nodes = 0;
  };
  struct Check {
    int rank = 0;
    std::optional<Verdict> verdict;
    bool lost = false;       // its worker was dropped before answering
    bool abandoned = false;  // cancelled here: the answer only frees the worker's slot
  };
  void listen();
  void handle(const Envelope& e);
  // mutex_ held; `silent`: it stopped answering (it may have died), rather than refused.
  void drop(int rank, const std::string& why, bool silent = false);
  int free_worker() const;                      // mutex_ held; -1: none

  MpiLink& link_;
  const std::chrono::milliseconds rank_timeout_;
  std::function<void(const std::string&)> log_;
  mutable std::mutex mutex_;
  std::condition_variable answered_;  // a verdict, a greeting or a drop
  std::vector<Worker> workers_;  // by rank; rank 0's entry unused
  std::map<uint64_t, Check> checks_;
  uint64_t next_id_ = 1;
  uint64_t model_nodes_ = 0;  // 0: not known yet
  int local_slots_ = 0;
  int lost_ = 0;
  uint64_t answered_checks_ = 0;
  bool silent_lost_ = false;
  bool stopping_ = false;
  std::thread listener_;
};

}  // namespace reduce::cluster
