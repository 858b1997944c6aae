// The MPI launcher's environment (Open MPI's mpirun, PMI and PMIx launchers such as srun), and what
// a process does with it.
#include "cluster/mpi_launch.h"

#include <algorithm>
#include <cstdlib>

namespace reduce::cluster {

namespace {

// The first of `names` that is set, as an integer (-1: none is).
int first_int(std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return -1;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

}  // namespace

MpiLaunch mpi_launch_from_environment() {
  MpiLaunch l;
  const int size = first_int({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"});
  const int rank = first_int({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"});
  l.under_mpi = size >= 0 || rank >= 0;
  l.size = std::max(size, 0);
  l.rank = std::max(rank, 0);
  l.local_rank = std::max(first_int({"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}), 0);
  return l;
}

void substitute_rank(std::vector<std::string>& env, const MpiLaunch& launch) {
  for (auto& e : env) {
    replace_all(e, "{rank}", std::to_string(launch.rank));
    replace_all(e, "{local_rank}", std::to_string(launch.local_rank));
  }
}

Status check_rank_timeout(double seconds) {
  if (seconds >= 0.1 && seconds <= 3600) return {};
  return Error{"--rank-timeout", std::to_string(seconds) + " is outside 0.1..3600"};
}

JobPlan job_plan(const MpiLaunch& launch, bool with_mpi) {
  if (!launch.under_mpi || launch.size == 1) return JobPlan::Alone;
  return with_mpi ? JobPlan::Join : JobPlan::Refuse;
}

std::string refusal_line(const MpiLaunch& launch) {
  if (launch.rank != 0) return {};
  return "error: this reduce was built without MPI (libopenmpi-dev): under mpirun or srun each copy would "
         "reduce alone; rebuild with MPI or run it without the launcher";
}

std::string rank_zero_lost_line(int rank, std::chrono::milliseconds rank_timeout, const std::string& stopped) {
  return "error: rank " + std::to_string(rank) + ": nothing from rank 0 for " + std::to_string(rank_timeout.count()) +
         " ms (--rank-timeout); " + stopped;
}

}  // namespace reduce::cluster
