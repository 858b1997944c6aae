// An MPI job's ranks at work: in `reduce MODEL` rank 0 reduces and the other ranks check candidates
// for it (ClusterRole); in `reduce batch` each rank reduces whole models (share_batch). Lines for
// the user go to `log`, one call per line (every rank's stderr goes to the same place).
#pragma once

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <variant>
#include <vector>

#include "core/model.h"
#include "oracle/oracle.h"
#include "session/remote_checks.h"

namespace reduce::cluster {

using LogLine = std::function<void(const std::string& line)>;

// What an MPI job changes in `reduce MODEL`; null on one host.
class ClusterRole {
 public:
  virtual ~ClusterRole() = default;
  virtual bool worker() const = 0;  // ranks 1..N-1: check candidates, print nothing
  // Worker: checks what rank 0 sends until it says stop. False when rank 0 fell silent for the rank
  // timeout (its checks were stopped, and a line said so): the rank then exits 5. `oracle` is null
  // when this rank could not load the model or build its oracle (`error`).
  virtual bool serve(Oracle* oracle, const Model* model, const std::string& error) = 0;
  // Rank 0: the remote checks of a session on `model`, and the number of ranks.
  virtual RemoteChecks* join(const Model& model, const Oracle& oracle) = 0;
  virtual int ranks() const = 0;
};

// Joins the MPI job (job_plan said Join) and runs `reduction` with this rank's role; its result.
int in_mpi_job(double rank_timeout_seconds, const LogLine& log, const std::function<int(ClusterRole*)>& reduction);

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
// How a worker rank's part of a batch ended: there was nothing left, or rank 0 fell silent for the
// rank timeout (after one line to `log`; the rank then exits 5).
struct WorkerRankEnd {
  bool rank_zero_lost = false;
};
// Rank 0 gets the outcome (`count` items in all), the other ranks how their part ended.
std::variant<WorkerRankEnd, BatchOutcome> share_batch(size_t count, const BatchShare& share, double rank_timeout_seconds,
                                                      const LogLine& log, std::stop_token stop);

}  // namespace reduce::cluster
