// BundleLock: one reduction at a time writes a bundle folder. Acquiring it creates the folder (an
// output that cannot be written is refused before any work, not after the whole reduction) and
// takes an exclusive lock on DIR/.lock (flock) for as long as the value lives; a second `reduce -o
// DIR` is refused with one line naming the holder's pid.
#pragma once

#include <filesystem>

#include "core/status.h"

namespace reduce {

class BundleLock {
 public:
  static Expected<BundleLock> acquire(const std::filesystem::path& dir);
  BundleLock(BundleLock&& other) noexcept;
  BundleLock& operator=(BundleLock&&) = delete;
  BundleLock(const BundleLock&) = delete;
  ~BundleLock();  // unlocks; a folder it created that holds nothing else is removed

 private:
  BundleLock(std::filesystem::path dir, int fd, bool created) : dir_(std::move(dir)), fd_(fd), created_(created) {}
  std::filesystem::path dir_;
  int fd_ = -1;
  bool created_ = false;
};

// The name of the lock file in a bundle folder (not a bundle entry: check_bundle_folder ignores it).
inline constexpr const char* kBundleLockName = ".lock";

}  // namespace reduce
