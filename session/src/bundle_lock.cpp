// The exclusive lock of a bundle folder: flock on DIR/.lock, holding the holder's pid.
#include "session/bundle_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace reduce {

namespace fs = std::filesystem;

Expected<BundleLock> BundleLock::acquire(const fs::path& dir) {
  const std::string where = dir.string();
  std::error_code ec;
  const bool existed = fs::exists(dir, ec);
  if (!existed) {
    fs::create_directories(dir, ec);
    if (ec) return Error{where, "cannot create the bundle folder: " + ec.message()};
  }
  const fs::path file = dir / kBundleLockName;
  // The lock file may be unlinked by a holder that is ending: lock, then check that the name
  // still leads to the locked file, else try again.
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return Error{where, std::string("cannot write in the bundle folder: ") + std::strerror(errno)};
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      char pid[32] = {};
      const ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
      ::close(fd);
      if (err != EWOULDBLOCK) return Error{where, std::string("cannot lock the bundle folder: ") + std::strerror(err)};
      std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : std::string("?");
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
      return Error{where, "another reduce (pid " + holder + ") is writing this bundle; wait for it or choose another -o"};
    }
    struct stat by_fd {}, by_name {};
    if (::fstat(fd, &by_fd) == 0 && ::stat(file.c_str(), &by_name) == 0 && by_fd.st_ino == by_name.st_ino &&
        by_fd.st_dev == by_name.st_dev) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
        const int err = errno;
        ::close(fd);
        return Error{where, std::string("cannot write in the bundle folder: ") + std::strerror(err)};
      }
      return BundleLock(dir, fd, !existed);
    }
    ::close(fd);
  }
  return Error{where, "cannot lock the bundle folder: its lock file keeps changing"};
}

BundleLock::BundleLock(BundleLock&& other) noexcept : dir_(std::move(other.dir_)), fd_(other.fd_), created_(other.created_) {
  other.fd_ = -1;
}

BundleLock::~BundleLock() {
  if (fd_ < 0) return;
  std::error_code ec;
  fs::remove(dir_ / kBundleLockName, ec);  // still locked: nobody holds this name now
  ::close(fd_);
  if (created_) fs::remove(dir_, ec);  // only when empty: a folder made for nothing goes again
}

}  // namespace reduce
