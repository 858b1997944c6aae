// The reproducer's first fresh run, started before the search ends (early_rerun.h).
#include "early_rerun.h"

namespace reduce {

void EarlyRerun::start(const Candidate& candidate, size_t rounds) {
  if (run_ && run_->candidate == candidate) return;
  cancel();
  run_ = std::make_unique<FreshRun>();
  run_->candidate = candidate;
  run_->started_at_round = rounds;
  cancel_ = std::make_unique<std::atomic<bool>>(false);
  thread_ = std::thread([run = run_.get(), flag = cancel_.get(), this] {
    run->verdict = oracle_.rerun(run->candidate, flag, &run->actual);
  });
}

std::optional<FreshRun> EarlyRerun::take(const Candidate& candidate) {
  if (!run_ || run_->candidate != candidate) {
    cancel();
    return std::nullopt;
  }
  if (thread_.joinable()) thread_.join();
  std::unique_ptr<FreshRun> run = std::move(run_);
  if (run->verdict.cancelled) {
    ++discarded_;
    return std::nullopt;
  }
  return std::move(*run);
}

void EarlyRerun::cancel() {
  if (cancel_) cancel_->store(true);
  if (thread_.joinable()) thread_.join();
  if (run_) ++discarded_;
  run_.reset();
}

}  // namespace reduce
