// Shared work for `reduce batch` in an MPI job: rank 0 hands out items 0, 1, ... in order to
// whichever rank asks first (itself included); each item runs on one rank, and rank 0 collects
// every item's result string. An item whose rank is lost is tried once more on another rank.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "cluster/messages.h"
#include "cluster/mpi_link.h"

namespace reduce::cluster {

struct SharedWork {
  size_t count = 0;
  // Rank 0, as it hands an attempt out: the attempt's `place` (sent to the rank that runs it).
  std::function<std::string(size_t item, int attempt)> prepare;
  // Every rank: runs the attempt, returns its result. On a worker rank, `gone` is requested when
  // rank 0 falls silent (the attempt should stop: nobody will take its result).
  std::function<std::string(const Attempt&, std::stop_token gone)> work;
  // Rank 0, for the one attempt per item whose result counts (its rank was not dropped): the
  // item's result (e.g. `status`, or an error when its output cannot be moved in place).
  std::function<std::string(const Attempt&, const std::string& status)> accept;
  // The result of an item whose rank was lost on its second attempt too.
  std::string lost;
};

struct WorkResults {
  // Rank 0, per item: its result; nullopt when it was not started (stopped). Empty on other ranks.
  std::vector<std::optional<std::string>> results;
  // Rank 0, per item: the ranks dropped while they held it, in order.
  std::vector<std::vector<int>> lost_ranks;
  int ranks_lost = 0;  // rank 0: ranks dropped, with or without an item
  // A worker rank: rank 0 sent nothing for the rank timeout (its attempt, if any, was stopped);
  // MpiLink::skip_finalize is set.
  bool rank_zero_lost = false;
};

// Runs `work` for every item on some rank. A rank silent for `rank_timeout` (its heartbeats
// stopped) is dropped with a line to `log`, and whatever it answers later is ignored; its item goes
// back to the front of the queue once (attempt 2), and is `lost` when its second rank is dropped too.
// A worker that hears nothing from rank 0 (not even its heartbeat) for `rank_timeout` stops.
WorkResults share_work(MpiLink& link, const SharedWork& job, std::chrono::milliseconds rank_timeout,
                       const std::function<void(const std::string&)>& log, std::stop_token stop);

}  // namespace reduce::cluster
