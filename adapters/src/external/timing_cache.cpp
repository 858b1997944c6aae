// TimingCachePool: files lent one build at a time (adapters/timing_cache.h).
#include "adapters/timing_cache.h"

#include <stdlib.h>

#include <string>

namespace reduce {

TimingCachePool::~TimingCachePool() {
  std::error_code ec;
  if (!folder_.empty()) std::filesystem::remove_all(folder_, ec);
}

Expected<TimingCachePool::Lease> TimingCachePool::lease() {
  std::lock_guard lock(mutex_);
  if (folder_.empty()) {
    std::error_code ec;
    const auto base = std::filesystem::temp_directory_path(ec);
    if (ec) return Error{"timing cache", "no temporary folder: " + ec.message(), ErrorKind::Setup};
    std::string pattern = (base / "reduce-timing-cache-XXXXXX").string();
    if (!mkdtemp(pattern.data())) return Error{pattern, "cannot create the timing cache folder", ErrorKind::Setup};
    folder_ = pattern;
  }
  ++leases_;
  for (size_t k = 0; k < lent_.size(); ++k)
    if (!lent_[k]) {
      lent_[k] = true;
      return Lease(this, k);
    }
  lent_.push_back(true);
  return Lease(this, lent_.size() - 1);
}

TimingCachePool::Lease::~Lease() {
  if (!pool_) return;
  std::lock_guard lock(pool_->mutex_);
  pool_->lent_[index_] = false;
}

std::filesystem::path TimingCachePool::Lease::path() const {
  return pool_->folder_ / ("timing_" + std::to_string(index_) + ".cache");
}

size_t TimingCachePool::leases() const {
  std::lock_guard lock(mutex_);
  return leases_;
}

size_t TimingCachePool::files() const {
  std::lock_guard lock(mutex_);
  return lent_.size();
}

}  // namespace reduce
