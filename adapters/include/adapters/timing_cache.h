// TensorRT timing caches shared by the engine builds of one reduction: each build lends a cache file
// for its duration (never one file to two builds at once) and gives it back for the next build, so
// that a reduction's hundreds of builds time each tactic once per file, not once per build.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "core/status.h"

namespace reduce {

class TimingCachePool {
 public:
  // The files live in a fresh private folder, made at the first lease and removed with the pool.
  TimingCachePool() = default;
  ~TimingCachePool();
  TimingCachePool(const TimingCachePool&) = delete;
  TimingCachePool& operator=(const TimingCachePool&) = delete;

  // One file lent to one build: `path()` (timing_K.cache; the tool creates it on the first build)
  // belongs to no other lease until this one ends. A new file only when every file is lent, so the
  // files are as many as the builds that ran at once.
  class Lease {
   public:
    Lease(Lease&& other) noexcept : pool_(other.pool_), index_(other.index_) { other.pool_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    std::filesystem::path path() const;

   private:
    friend class TimingCachePool;
    Lease(TimingCachePool* pool, size_t index) : pool_(pool), index_(index) {}
    TimingCachePool* pool_;
    size_t index_;
  };
  // Errors: the folder cannot be made (a setup error).
  Expected<Lease> lease();

  // How many builds leased a file, and how many files there are (for reports).
  size_t leases() const;
  size_t files() const;

 private:
  std::filesystem::path folder_;
  mutable std::mutex mutex_;
  std::vector<bool> lent_;
  size_t leases_ = 0;
};

}  // namespace reduce
