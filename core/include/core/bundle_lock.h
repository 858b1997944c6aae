// The two guards of every output a command writes (`reduce -o`, `precision -o`, `convert -o`,
// `compare --chart`, `batch -o`): one writer at a time (BundleLock) and never over an input
// (check_output_spares). Both are taken before any work, so a refused output costs nothing.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"

namespace reduce {

// An exclusive lock (flock) on a lock file next to the output, for as long as the value lives; a
// second writer is refused with one line naming the holder's pid. The lock file is only ever
// created fresh (O_EXCL, O_NOFOLLOW) or reused when it is a regular file with no other name (left by
// a holder that died): a symlink, a hard link or a device in its place is refused, never written
// through.
class BundleLock {
 public:
  // A folder output (a bundle, batch's OUT): creates the folder (an output that cannot be written
  // is refused before any work, not after the whole reduction) and locks DIR/.lock.
  static Expected<BundleLock> acquire(const std::filesystem::path& dir);
  // A file output (convert's model, compare's chart): locks DIR/.NAME.lock in its folder, which
  // must exist. `option` is the flag that named the file (for "choose another ...").
  static Expected<BundleLock> acquire_file(const std::filesystem::path& file, const std::string& option);
  // A file written into a bundle folder (DIR/.lock exists): refused while a reduction holds that
  // bundle. `option` as above.
  static Status check_bundle_free(const std::filesystem::path& file, const std::string& option);
  BundleLock(BundleLock&& other) noexcept;
  BundleLock& operator=(BundleLock&&) = delete;
  BundleLock(const BundleLock&) = delete;
  ~BundleLock();  // unlocks; a folder it created that holds nothing else is removed

 private:
  BundleLock(std::filesystem::path lock_file, int fd, bool created_dir)
      : lock_file_(std::move(lock_file)), fd_(fd), created_dir_(created_dir) {}
  // The one locking routine both outputs share: errors name `where` (the output); `refusal` is what
  // follows "another reduce (pid N) is writing ".
  static Expected<BundleLock> lock(const std::filesystem::path& lock_file, const std::string& where, bool created_dir,
                                   const std::string& refusal);
  std::filesystem::path lock_file_;
  int fd_ = -1;
  bool created_dir_ = false;
};

// The name of the lock file in a bundle folder (not a bundle entry: check_bundle_folder ignores it).
inline constexpr const char* kBundleLockName = ".lock";

// Refuses an output that would write over one of `inputs`: `output` is an input by any path (itself,
// `./M`, a symlink, a hard link: the same device and inode), or a folder that holds one at any depth.
// The error names `output` and the input, and ends "(choose another OPTION)".
Status check_output_spares(const std::filesystem::path& output, const std::vector<std::filesystem::path>& inputs,
                           const std::string& option);

// Both guards for a command about to write `output`, a folder (BundleLock::acquire) or a file
// (acquire_file): checked against `inputs`, then locked. `option` names the flag that gave it.
enum class OutputKind { Folder, File };
Expected<BundleLock> claim_output(const std::filesystem::path& output, OutputKind kind,
                                  const std::vector<std::filesystem::path>& inputs, const std::string& option);

}  // namespace reduce
