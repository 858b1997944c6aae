// The guards of an output: flock on a lock file holding the holder's pid, and the input check.
#include "core/bundle_lock.h"

#include "core/model_io.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

namespace reduce {

namespace fs = std::filesystem;

namespace {

bool same_inode(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// Why an existing name cannot be a lock file of ours, or "" when it can (a regular file with no
// other name: writing it changes nothing anyone else reads).
std::string not_a_lock_file(const struct stat& st) {
  if (S_ISLNK(st.st_mode)) return "is a symbolic link, not a lock file; remove it";
  if (!S_ISREG(st.st_mode)) return "is not a regular file, so not a lock file; remove it";
  if (st.st_nlink != 1)
    return "is a hard link (" + std::to_string(st.st_nlink) + " names), not a lock file: never written through; remove it";
  return "";
}

// Opens the lock file without ever writing through a name someone else put there: created fresh,
// or an earlier holder's file (regular, one name). nullopt: the name changed under us, try again.
Expected<std::optional<int>> open_lock_file(const fs::path& file) {
  const std::string where = file.string();
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0) return std::optional<int>(fd);
  if (errno != EEXIST) return Error{where, std::string("cannot create the lock file: ") + std::strerror(errno)};
  struct stat by_name {};
  if (::lstat(file.c_str(), &by_name) != 0) return std::optional<int>();  // its holder just removed it
  if (std::string why = not_a_lock_file(by_name); !why.empty()) return Error{where, why};
  // O_NONBLOCK, O_NOCTTY: should a device or FIFO take the name now, opening it neither blocks nor
  // adopts a terminal; fstat then tells it from the file seen above.
  fd = ::open(file.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<int>();
    return Error{where, std::string("cannot open the lock file: ") + std::strerror(errno)};
  }
  struct stat by_fd {};
  if (::fstat(fd, &by_fd) != 0 || !same_inode(by_fd, by_name) || !not_a_lock_file(by_fd).empty()) {
    ::close(fd);
    return std::optional<int>();
  }
  return std::optional<int>(fd);
}

// "pid" of the holder, as it wrote it in the lock file ("?" when it has not yet).
std::string holder_pid(int fd) {
  char pid[32] = {};
  const ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
  std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : std::string("?");
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
  return holder.empty() ? "?" : holder;
}

// True when `path` is `dir` or lies below it (both made absolute, symlinks of existing parts resolved).
bool lies_inside(const fs::path& path, const fs::path& dir) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec), d = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  auto pi = p.begin();
  for (auto di = d.begin(); di != d.end(); ++di, ++pi) {
    if (di->empty() && std::next(di) == d.end()) return true;  // trailing separator
    if (pi == p.end() || *pi != *di) return false;
  }
  return true;
}

}  // namespace

Expected<BundleLock> BundleLock::lock(const fs::path& file, const std::string& where, bool created_dir,
                                      const std::string& refusal) {
  // The lock file may be unlinked by a holder that is ending: lock, then check that the name
  // still leads to the locked file, else try again.
  for (int attempt = 0; attempt < 8; ++attempt) {
    REDUCE_ASSIGN(const std::optional<int> opened, open_lock_file(file));
    if (!opened) continue;
    const int fd = *opened;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string holder = holder_pid(fd);
      ::close(fd);
      if (err != EWOULDBLOCK) return Error{where, std::string("cannot lock: ") + std::strerror(err)};
      return Error{where, "another reduce (pid " + holder + ") is writing " + refusal};
    }
    struct stat by_fd {}, by_name {};
    if (::fstat(fd, &by_fd) == 0 && ::lstat(file.c_str(), &by_name) == 0 && same_inode(by_fd, by_name)) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
        const int err = errno;
        ::close(fd);
        return Error{where, std::string("cannot write the lock file: ") + std::strerror(err)};
      }
      return BundleLock(file, fd, created_dir);
    }
    ::close(fd);
  }
  return Error{file.string(), "cannot lock: the lock file keeps changing"};
}

Expected<BundleLock> BundleLock::acquire(const fs::path& dir) {
  std::error_code ec;
  const bool existed = fs::exists(dir, ec);
  if (!existed) {
    fs::create_directories(dir, ec);
    if (ec) return Error{dir.string(), "cannot create the bundle folder: " + ec.message()};
  }
  auto locked = lock(dir / kBundleLockName, dir.string(), !existed, "this bundle; wait for it or choose another -o");
  if (!locked && !existed) fs::remove(dir, ec);  // refused: the folder made for it goes again
  return locked;
}

Expected<BundleLock> BundleLock::acquire_file(const fs::path& file, const std::string& option) {
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  return lock(dir / ("." + file.filename().string() + ".lock"), file.string(), false,
              "this file; wait for it or choose another " + option);
}

Status BundleLock::check_bundle_free(const fs::path& file, const std::string& option) {
  // A chart beside report.md waits for no reduction writing that bundle; a stale lock of one that
  // died is taken and let go.
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::exists(dir / kBundleLockName, ec)) return {};
  auto held = lock(dir / kBundleLockName, file.string(), false,
                   "the bundle " + dir.string() + " that holds it; wait for it or choose another " + option);
  if (!held) return held.error();
  return {};
}

BundleLock::BundleLock(BundleLock&& other) noexcept
    : lock_file_(std::move(other.lock_file_)), fd_(other.fd_), created_dir_(other.created_dir_) {
  other.fd_ = -1;
}

BundleLock::~BundleLock() {
  if (fd_ < 0) return;
  // Still locked: nobody else holds this name now. Removed only while it still leads to our file.
  struct stat by_fd {}, by_name {};
  if (::fstat(fd_, &by_fd) == 0 && ::lstat(lock_file_.c_str(), &by_name) == 0 && same_inode(by_fd, by_name))
    ::unlink(lock_file_.c_str());
  ::close(fd_);
  std::error_code ec;
  if (created_dir_) fs::remove(lock_file_.parent_path(), ec);  // only when empty: a folder made for nothing goes again
}

Status check_output_spares(const fs::path& output, const std::vector<fs::path>& inputs, const std::string& option) {
  for (const fs::path& input : inputs) {
    if (input.empty()) continue;
    std::error_code ec;
    const fs::path out = fs::weakly_canonical(fs::absolute(output, ec), ec), in = fs::weakly_canonical(fs::absolute(input, ec), ec);
    if (fs::equivalent(output, input, ec) || out == in)
      return Error{output.string(), "is the input model " + input.string() +
                                        " (the same file); writing it would replace the model (choose another " + option + ")"};
    if (lies_inside(input, output))
      return Error{output.string(), "output folder holds the input model " + input.string() +
                                        "; writing there would replace it (choose another " + option + ")"};
    // The model's weights in external-data files are the model too.
    const auto files = files_model_reads(input);
    for (size_t k = 1; k < files.size(); ++k) {
      if (fs::equivalent(output, files[k], ec) ||
          fs::weakly_canonical(fs::absolute(files[k], ec), ec) == out)
        return Error{output.string(), "is the external data of the input model " + input.string() +
                                          " (its weights); writing it would replace them (choose another " + option + ")"};
      if (lies_inside(files[k], output))
        return Error{output.string(), "output folder holds " + files[k].string() + ", external data of the input model " +
                                          input.string() + "; writing there would replace it (choose another " + option + ")"};
    }
  }
  return {};
}

Expected<BundleLock> claim_output(const fs::path& output, OutputKind kind, const std::vector<fs::path>& inputs,
                                  const std::string& option) {
  REDUCE_TRY(check_output_spares(output, inputs, option));
  if (kind == OutputKind::Folder) return BundleLock::acquire(output);
  REDUCE_TRY(BundleLock::check_bundle_free(output, option));
  return BundleLock::acquire_file(output, option);
}

}  // namespace reduce
