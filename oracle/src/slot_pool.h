// SlotPool: the `--jobs` slots of an oracle. A run holds one while it runs, so that an environment
// made per slot (CUDA_VISIBLE_DEVICES={slot}) never serves two runs at once.
#pragma once

#include <condition_variable>
#include <mutex>
#include <vector>

namespace reduce {

class SlotPool {
 public:
  // `slots` slots, each held by one run at a time; `shared`: one slot 0 every run holds at once
  // (nothing is per slot and nothing bounds the runs, so nothing waits).
  SlotPool(int slots, bool shared) : busy_(shared ? 1 : static_cast<size_t>(slots), false), shared_(shared) {}

  // A slot held until the lease ends.
  class Lease {
   public:
    explicit Lease(SlotPool& pool) : pool_(pool), slot_(pool.acquire()) {}
    ~Lease() { pool_.release(slot_); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    int slot() const { return slot_; }

   private:
    SlotPool& pool_;
    const int slot_;
  };

 private:
  int acquire() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      for (size_t s = 0; s < busy_.size(); ++s)
        if (shared_ || !busy_[s]) {
          busy_[s] = true;
          return static_cast<int>(s);
        }
      free_.wait(lock);
    }
  }
  void release(int slot) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!shared_) busy_[static_cast<size_t>(slot)] = false;
    }
    free_.notify_one();
  }

  std::mutex mutex_;
  std::condition_variable free_;
  std::vector<bool> busy_;
  const bool shared_;
};

}  // namespace reduce
