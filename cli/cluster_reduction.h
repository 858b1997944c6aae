// `reduce MODEL` and `reduce batch` in an MPI job: rank 0 reduces, the other ranks check
// candidates for it; or each rank reduces whole models of the batch.
#pragma once

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <variant>
#include <vector>

#include "mpi_launch.h"

namespace reduce::cli {

// Joins the MPI job and runs `reduction` with this rank's role; its exit code. A build without MPI
// refuses with one line (exit 2): every copy would reduce alone into the same folder.
int in_mpi_job(double rank_timeout_seconds, const std::function<int(ClusterRole*)>& reduction);

// Whether this build joins MPI jobs.
bool built_with_mpi();

// `reduce batch` in an MPI job: every item of `order` reduced on some rank, handed out in that
// order. Each try at an item writes where rank 0's `prepare` says (its own folder), and only the
// try whose rank was not dropped is passed to `accept` (which moves that folder in place); a
// lost rank's item is tried once more elsewhere.
struct BatchShare {
  std::vector<size_t> order;
  std::function<std::string(size_t item, int attempt)> prepare;                     // rank 0
  // Every rank; `gone`: on a worker rank, rank 0 fell silent (stop: nobody will take the result).
  std::function<std::string(size_t item, const std::string& place, std::stop_token gone)> reduce;
  std::function<std::string(size_t item, const std::string& place, const std::string& status)> accept;  // rank 0
};
struct BatchOutcome {
  std::vector<std::optional<std::string>> statuses;  // by item; nullopt: not started
  std::vector<std::vector<int>> lost_ranks;          // by item: ranks dropped while they held it
  int ranks_lost = 0;
};
// Rank 0 gets the outcome (`count` items in all); the other ranks their exit code once there is
// nothing left, or once rank 0 fell silent for the rank timeout (then after one line on stderr).
std::variant<int, BatchOutcome> share_batch(size_t count, const BatchShare& share, double rank_timeout_seconds,
                                            std::stop_token stop);

}  // namespace reduce::cli
