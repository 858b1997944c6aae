// How this process was started: by an MPI launcher (mpirun, srun) or not. Read from the launcher's
// environment, so that a build without MPI can tell that it runs as one of several copies.
#pragma once

#include <string>
#include <vector>

#include "session/remote_checks.h"

namespace reduce::cli {

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

// True (after one line on stderr) when several copies run and this build cannot join them: the
// caller exits 2 instead of reducing the same model N times into the same folder.
bool refuse_without_mpi(const MpiLaunch& launch);

// What an MPI job changes in `reduce MODEL` (cli/cluster_reduction.cpp); null on one host.
class ClusterRole {
 public:
  virtual ~ClusterRole() = default;
  virtual bool worker() const = 0;  // ranks 1..N-1: check candidates, print nothing
  // Worker: checks what rank 0 sends until it says stop; the exit code. `oracle` is null when this
  // rank could not load the model or build its oracle (`error`).
  virtual int serve(Oracle* oracle, const Model* model, const std::string& error) = 0;
  // Rank 0: the remote checks of a session on `model`, and the number of ranks.
  virtual RemoteChecks* join(const Model& model, const Oracle& oracle) = 0;
  virtual int ranks() const = 0;
};

}  // namespace reduce::cli
