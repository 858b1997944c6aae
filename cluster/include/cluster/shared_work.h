// Shared work for `reduce batch` in an MPI job: rank 0 hands out items 0, 1, ... in order to
// whichever rank asks first (itself included); each item runs on one rank, and rank 0 collects
// every item's result string.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "cluster/mpi_link.h"

namespace reduce::cluster {

struct WorkResults {
  // Rank 0: per item, its result; nullopt when it was not started (stopped). Empty on other ranks.
  std::vector<std::optional<std::string>> results;
};

// Runs `work(i)` for every item i in 0..count-1 on some rank. A rank silent for `rank_timeout` (its heartbeats stopped) is dropped with a line to
// `log`: its item's result is `lost` (its bundle may be half written; a rerun resumes it).
WorkResults share_work(MpiLink& link, size_t count, const std::function<std::string(size_t)>& work,
                       std::chrono::milliseconds rank_timeout, const std::string& lost,
                       const std::function<void(const std::string&)>& log, std::stop_token stop);

}  // namespace reduce::cluster
