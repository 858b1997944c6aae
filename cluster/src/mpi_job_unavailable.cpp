// A build without MPI joins no job: job_plan refuses a launch of several copies, so a caller that
// follows it never gets here.
#include <cstdio>
#include <cstdlib>

#include "cluster/mpi_job.h"
#include "cluster/mpi_launch.h"

namespace reduce::cluster {

namespace {

[[noreturn]] void not_built() {
  std::fputs("reduce: an MPI job in a build without MPI (the caller did not follow job_plan)\n", stderr);
  std::abort();
}

}  // namespace

bool built_with_mpi() { return false; }

int in_mpi_job(double, const LogLine&, const std::function<int(ClusterRole*)>&) { not_built(); }

std::variant<WorkerRankEnd, BatchOutcome> share_batch(size_t, const BatchShare&, double, const LogLine&, std::stop_token) {
  not_built();
}

}  // namespace reduce::cluster
