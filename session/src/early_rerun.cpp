// The reproducer's first fresh run, started before the search ends (early_rerun.h).
#include "early_rerun.h"

#include <vector>

#include "oracle/model_independence.h"

namespace reduce {

void EarlyRerun::start(const Candidate& candidate, size_t rounds, int again, bool probes) {
  if (run_ && run_->candidate == candidate) return;
  cancel();
  run_ = std::make_unique<FreshRun>();
  run_->candidate = candidate;
  run_->started_at_round = rounds;
  run_->again.resize(static_cast<size_t>(std::max(0, again)));
  cancel_ = std::make_unique<std::atomic<bool>>(false);
  thread_ = std::thread([run = run_.get(), flag = cancel_.get(), probes, this] {
    std::vector<std::thread> beside;
    for (auto& v : run->again) beside.emplace_back([&v, run, flag, this] { v = oracle_.rerun(run->candidate, flag); });
    if (probes) beside.emplace_back([run, flag, this] { run->probes = run_neutral_probes(oracle_, flag); });
    run->verdict = oracle_.rerun(run->candidate, flag, &run->actual);
    for (auto& t : beside) t.join();
  });
}

std::optional<FreshRun> EarlyRerun::take(const Candidate& candidate) {
  if (!run_ || run_->candidate != candidate) {
    cancel();
    return std::nullopt;
  }
  if (thread_.joinable()) thread_.join();
  bool cancelled = run_->verdict.cancelled;
  for (const auto& v : run_->again) cancelled |= v.cancelled;
  for (const auto& v : run_->probes) cancelled |= v.cancelled;
  if (cancelled) {
    discard();
    return std::nullopt;
  }
  std::unique_ptr<FreshRun> run = std::move(run_);
  return std::move(*run);
}

void EarlyRerun::discard() {
  if (!run_) return;
  discarded_ += 1 + run_->again.size() + run_->probes.size();
  discarded_probes_ += run_->probes.size();
  run_.reset();
}

void EarlyRerun::cancel() {
  if (cancel_) cancel_->store(true);
  if (thread_.joinable()) thread_.join();
  discard();
}

}  // namespace reduce
