// The roles of an MPI job's ranks (a build with MPI): rank 0's remote checks, the workers' checks,
// the shared batch, and the rank-0-lost policy of the workers.
#include "cluster/mpi_job.h"

#include "cluster/check_worker.h"
#include "cluster/cluster_checks.h"
#include "cluster/mpi_launch.h"
#include "cluster/shared_work.h"

namespace reduce::cluster {

namespace {

// Heartbeats (workers to rank 0, rank 0 to workers): well below any sensible --rank-timeout.
constexpr auto kHeartbeatPeriod = std::chrono::milliseconds(250);

std::chrono::milliseconds seconds(double s) { return std::chrono::milliseconds(static_cast<int64_t>(s * 1000)); }

class MpiRole : public ClusterRole {
 public:
  MpiRole(MpiLink& link, double rank_timeout, const LogLine& log)
      : link_(link), rank_timeout_(seconds(rank_timeout)), log_(log) {
    if (link.rank() == 0) checks_.emplace(link, rank_timeout_, log);
  }
  bool worker() const override { return link_.rank() > 0; }
  bool serve(Oracle* oracle, const Model* model, const std::string& error) override {
    Hello hello{oracle != nullptr, error, oracle ? oracle->options().slots : 0, model ? model->graph.nodes.size() : 0};
    if (serve_checks(link_, oracle, hello, rank_timeout_)) return true;
    log_(rank_zero_lost_line(link_.rank(), rank_timeout_, "its checks were stopped"));
    return false;
  }
  RemoteChecks* join(const Model& model, const Oracle& oracle) override {
    checks_->expect_model(model.graph.nodes.size(), oracle.options().slots);
    return &*checks_;
  }
  int ranks() const override { return link_.size(); }

 private:
  MpiLink& link_;
  const std::chrono::milliseconds rank_timeout_;
  const LogLine& log_;
  std::optional<ClusterChecks> checks_;  // rank 0
};

}  // namespace

bool built_with_mpi() { return true; }

int in_mpi_job(double rank_timeout, const LogLine& log, const std::function<int(ClusterRole*)>& reduction) {
  auto link = MpiLink::start(kHeartbeatPeriod);
  MpiRole role(*link, rank_timeout, log);
  return reduction(&role);
}

std::variant<WorkerRankEnd, BatchOutcome> share_batch(size_t count, const BatchShare& share, double rank_timeout,
                                                      const LogLine& log, std::stop_token stop) {
  auto link = MpiLink::start(kHeartbeatPeriod);
  // Items of the shared work are positions in `order`.
  SharedWork job;
  job.count = share.order.size();
  job.prepare = [&](size_t k, int attempt) { return share.prepare(share.order[k], attempt); };
  job.work = [&](const Attempt& a, std::stop_token gone) { return share.reduce(share.order[a.item], a.place, std::move(gone)); };
  job.accept = [&](const Attempt& a, const std::string& status) { return share.accept(share.order[a.item], a.place, status); };
  job.lost = "error (rank lost)";
  auto shared = share_work(*link, job, seconds(rank_timeout), log, std::move(stop));
  if (link->rank() > 0) {
    if (shared.rank_zero_lost) log(rank_zero_lost_line(link->rank(), seconds(rank_timeout), "its reduction was stopped"));
    return WorkerRankEnd{shared.rank_zero_lost};
  }
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

}  // namespace reduce::cluster
