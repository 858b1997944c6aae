// RunBudget: what one run of the reference executor may still spend (time, memory) and whether
// it was cancelled; checked before every node and subgraph run.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "engine/engine.h"

namespace reduce::ref {

class RunBudget {
 public:
  using Clock = std::chrono::steady_clock;

  RunBudget(const RunLimits& limits, const std::atomic<bool>* cancel) : limits_(limits), cancel_(cancel) {
    if (limits.timeout_seconds > 0)
      deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits.timeout_seconds));
  }

  // Whether the run may go on: not cancelled, not past its time.
  Status check() const {
    if (cancel_ && cancel_->load(std::memory_order_relaxed)) return make_error("run cancelled");
    if (deadline_ && Clock::now() >= *deadline_)
      return Error{"", "run exceeded its time limit of " + seconds(limits_.timeout_seconds) + " (--timeout)", ErrorKind::Timeout};
    return {};
  }

  // Whether `bytes` more would still fit, without counting them (checked before an allocation).
  Status fits(uint64_t bytes) const {
    const uint64_t now = held_ + bytes;
    if (limits_.max_memory_bytes == 0 || now <= limits_.max_memory_bytes) return {};
    return make_error("run needs more than its memory limit of " + mebibytes(limits_.max_memory_bytes) +
                      " (--max-memory): " + mebibytes(now) + " held at once");
  }
  // Counts `bytes` more held by the run, or fails (counting nothing) when that exceeds the budget.
  Status hold(uint64_t bytes) {
    REDUCE_TRY(fits(bytes));
    held_ += bytes;
    allocated_ += bytes;
    if (limits_.ledger) limits_.ledger->charge(bytes);
    return {};
  }
  // Bytes the run has held in all, released ones included (what went through the heap).
  uint64_t allocated() const { return allocated_; }
  void release(uint64_t bytes) {
    held_ -= bytes;
    if (limits_.ledger) limits_.ledger->discharge(bytes);
  }

 private:
  static std::string seconds(double s) {
    std::string text = std::to_string(s);
    text.erase(text.find_last_not_of('0') + 1);
    if (!text.empty() && text.back() == '.') text.pop_back();
    return text + " s";
  }
  static std::string mebibytes(uint64_t bytes) {
    return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
  }

  RunLimits limits_;
  const std::atomic<bool>* cancel_;
  std::optional<Clock::time_point> deadline_;
  uint64_t held_ = 0;  // one run computes its nodes on one thread
  uint64_t allocated_ = 0;
};

}  // namespace reduce::ref
