// How this process was started (by an MPI launcher such as mpirun or srun, or not) and what that
// makes it do: reduce alone, join the job, or refuse (a build without MPI). Read from the launcher's
// environment, so that a build without MPI can tell that it runs as one of several copies.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/status.h"

namespace reduce::cluster {

struct MpiLaunch {
  bool under_mpi = false;
  int size = 0;        // processes started (0: the launcher does not say)
  int rank = 0;        // this process's, from 0
  int local_rank = 0;  // among the processes on this host
};

MpiLaunch mpi_launch_from_environment();

// `{rank}` and `{local_rank}` in --slot-env values (`{slot}` is the oracle's): a GPU per rank is
// CUDA_VISIBLE_DEVICES={local_rank}.
void substitute_rank(std::vector<std::string>& env, const MpiLaunch& launch);

// --rank-timeout (reduce, batch): seconds a silent rank is kept, 0.1..3600.
Status check_rank_timeout(double seconds);

// Whether this build joins MPI jobs (cluster/ was built with MPI).
bool built_with_mpi();

// What a process does with its launch: a job of one is no job.
enum class JobPlan {
  Alone,   // not under a launcher, or the only copy
  Join,    // one rank of several: rank 0 reduces, the others work for it
  Refuse,  // several copies and no MPI in this build: each would reduce alone into the same folder
};
JobPlan job_plan(const MpiLaunch& launch, bool with_mpi = built_with_mpi());

// The one line a refused launch prints, on rank 0 only (every rank's stderr goes to the same
// place); empty on the other ranks.
std::string refusal_line(const MpiLaunch& launch);

// A worker rank's one line when rank 0 was silent for the rank timeout (it then exits 5): which
// rank, how long, and what it `stopped`.
std::string rank_zero_lost_line(int rank, std::chrono::milliseconds rank_timeout, const std::string& stopped);

}  // namespace reduce::cluster
