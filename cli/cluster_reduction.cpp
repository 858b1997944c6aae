// The roles of an MPI job's ranks in `reduce MODEL` (cluster/), or the refusal of a build without MPI.
#include "cluster_reduction.h"

#include <iostream>

#include "command.h"

#if REDUCE_WITH_MPI
#include "cluster/check_worker.h"
#include "cluster/cluster_checks.h"
#include "cluster/shared_work.h"
#endif

namespace reduce::cli {

#if REDUCE_WITH_MPI

namespace {

// Heartbeats (workers to rank 0, rank 0 to workers): well below any sensible --rank-timeout.
constexpr auto kHeartbeat = std::chrono::milliseconds(250);

std::chrono::milliseconds seconds(double s) { return std::chrono::milliseconds(static_cast<int64_t>(s * 1000)); }

// A worker's one line when rank 0 went silent; the exit code that goes with it.
int rank_zero_lost(const cluster::MpiLink& link, std::chrono::milliseconds rank_timeout, const std::string& stopped) {
  // One write: every rank's stderr goes to the same place, and pieces of two lines would interleave.
  std::cerr << "error: rank " + std::to_string(link.rank()) + ": nothing from rank 0 for " +
                   std::to_string(rank_timeout.count()) + " ms (--rank-timeout); " + stopped + "\n";
  return kExitRankZeroLost;
}

class MpiRole : public ClusterRole {
 public:
  MpiRole(cluster::MpiLink& link, double rank_timeout) : link_(link), rank_timeout_(seconds(rank_timeout)) {
    if (link.rank() == 0) checks_.emplace(link, rank_timeout_, [](const std::string& line) { std::cerr << line << "\n"; });
  }
  bool worker() const override { return link_.rank() > 0; }
  int serve(Oracle* oracle, const Model* model, const std::string& error) override {
    cluster::Hello hello{oracle != nullptr, error, oracle ? oracle->options().slots : 0,
                         model ? model->graph.nodes.size() : 0};
    if (!cluster::serve_checks(link_, oracle, hello, rank_timeout_))
      return rank_zero_lost(link_, rank_timeout_, "its checks were stopped");
    return kExitOk;
  }
  RemoteChecks* join(const Model& model, const Oracle& oracle) override {
    checks_->expect_model(model.graph.nodes.size(), oracle.options().slots);
    return &*checks_;
  }
  int ranks() const override { return link_.size(); }

 private:
  cluster::MpiLink& link_;
  const std::chrono::milliseconds rank_timeout_;
  std::optional<cluster::ClusterChecks> checks_;  // rank 0
};

}  // namespace

int in_mpi_job(double rank_timeout, const std::function<int(ClusterRole*)>& reduction) {
  auto link = cluster::MpiLink::start(kHeartbeat);
  MpiRole role(*link, rank_timeout);
  return reduction(&role);
}

bool built_with_mpi() { return true; }

std::variant<int, BatchOutcome> share_batch(size_t count, const BatchShare& share, double rank_timeout,
                                            std::stop_token stop) {
  auto link = cluster::MpiLink::start(kHeartbeat);
  // Items of the shared work are positions in `order`.
  cluster::SharedWork job;
  job.count = share.order.size();
  job.prepare = [&](size_t k, int attempt) { return share.prepare(share.order[k], attempt); };
  job.work = [&](const cluster::Attempt& a, std::stop_token gone) {
    return share.reduce(share.order[a.item], a.place, std::move(gone));
  };
  job.accept = [&](const cluster::Attempt& a, const std::string& status) {
    return share.accept(share.order[a.item], a.place, status);
  };
  job.lost = "error (rank lost)";
  auto shared = cluster::share_work(*link, job, seconds(rank_timeout),
                                    [](const std::string& line) { std::cerr << line << "\n"; }, std::move(stop));
  if (link->rank() > 0)
    return shared.rank_zero_lost ? rank_zero_lost(*link, seconds(rank_timeout), "its reduction was stopped") : kExitOk;
  BatchOutcome outcome;
  outcome.statuses.resize(count);
  outcome.lost_ranks.resize(count);
  outcome.ranks_lost = shared.ranks_lost;
  for (size_t k = 0; k < share.order.size(); ++k) {
    outcome.statuses[share.order[k]] = shared.results[k];
    outcome.lost_ranks[share.order[k]] = shared.lost_ranks[k];
  }
  return outcome;
}

#else

int in_mpi_job(double, const std::function<int(ClusterRole*)>&) {
  refuse_without_mpi(mpi_launch_from_environment());
  return kExitUsage;
}

bool built_with_mpi() { return false; }

// Not reached: batch_command refuses first.
std::variant<int, BatchOutcome> share_batch(size_t, const BatchShare&, double, std::stop_token) {
  return kExitUsage;
}

#endif

}  // namespace reduce::cli
