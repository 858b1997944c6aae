// RemoteChecks: candidates checked by other processes that hold the same model and oracle (MPI
// worker ranks, cluster/). The session asks it first and checks locally whenever it declines, so a
// session without it, or with every remote process lost, runs exactly as on one host.
#pragma once

#include <atomic>
#include <optional>

#include "core/candidate.h"
#include "oracle/oracle.h"

namespace reduce {

class RemoteChecks {
 public:
  virtual ~RemoteChecks() = default;
  // The verdict another process's oracle gave (cancelled when `cancel` was set first), or nullopt
  // when no remote slot is free or the process it went to was lost: the caller checks it itself.
  virtual std::optional<Verdict> evaluate(const Candidate& candidate, const std::atomic<bool>& cancel) = 0;
  // Processes that check candidates, this one included, and their engine slots (for report.json).
  virtual int ranks() const = 0;
  virtual int slots() const = 0;
  // Remote processes dropped so far (died, stopped answering, or could not load the model).
  virtual int lost() const = 0;
  // Verdicts other processes gave (cancelled checks included).
  virtual uint64_t answered() const = 0;
};

}  // namespace reduce
