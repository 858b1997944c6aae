// `reduce MODEL` and `reduce batch` in an MPI job: rank 0 reduces, the other ranks check
// candidates for it; or each rank reduces whole models of the batch.
#pragma once

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "mpi_launch.h"

namespace reduce::cli {

// Joins the MPI job and runs `reduction` with this rank's role; its exit code. A build without MPI
// refuses with one line (exit 2): every copy would reduce alone into the same folder.
int in_mpi_job(double rank_timeout_seconds, const std::function<int(ClusterRole*)>& reduction);

// Whether this build joins MPI jobs.
bool built_with_mpi();

// `reduce batch` in an MPI job: `work(order[k])` for every k on some rank, handed out in that order.
// Rank 0 gets each item's status by item number (nullopt: not started; `count` items in all); the
// other ranks get nullopt once there is nothing left.
using BatchStatuses = std::vector<std::optional<std::string>>;
std::optional<BatchStatuses> share_batch(size_t count, const std::vector<size_t>& order, double rank_timeout_seconds,
                                         const std::function<std::string(size_t)>& work, std::stop_token stop);

}  // namespace reduce::cli
