// MemoryLedger: the bytes of tensor values one reduction holds at once (engine runs' values,
// reference values kept in memory, outputs kept for bundles) and the most it ever held.
#pragma once

#include <atomic>
#include <cstdint>

namespace reduce {

// Shared by everything working for one reduction (threads included); never process-wide. Counts
// what is charged, not every allocation: scratch buffers inside a kernel are not values.
class MemoryLedger {
 public:
  void charge(uint64_t bytes) {
    const uint64_t now = held_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    uint64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }
  void discharge(uint64_t bytes) { held_.fetch_sub(bytes, std::memory_order_relaxed); }
  uint64_t held() const { return held_.load(std::memory_order_relaxed); }
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> held_{0};
  std::atomic<uint64_t> peak_{0};
};

}  // namespace reduce
