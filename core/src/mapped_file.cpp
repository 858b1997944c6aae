// Read-only memory maps of files, and atomic writes.
#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <utility>

namespace reduce {

namespace fs = std::filesystem;

MappedFile::~MappedFile() {
  if (data_ && size_) ::munmap(const_cast<std::byte*>(data_), size_);
}

namespace {

// What a file that is not a regular file is, for errors.
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// An open regular file and its size. Opening does not block (O_NONBLOCK: a FIFO without a writer
// would wait forever) and anything but a regular file (FIFOs, /dev/zero, sockets) is refused.
class RegularFile {
 public:
  static Expected<RegularFile> open(const fs::path& path) {
    RegularFile f;
    f.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (f.fd_ < 0) return Error{path.string(), std::string("cannot open: ") + std::strerror(errno)};
    struct stat st {};
    if (::fstat(f.fd_, &st) != 0) return Error{path.string(), std::string("cannot open: ") + std::strerror(errno)};
    if (!S_ISREG(st.st_mode))
      return Error{path.string(), std::string("is ") + file_kind(st.st_mode) + ", not a regular file"};
    f.size_ = static_cast<uint64_t>(st.st_size);
    return f;
  }
  RegularFile(RegularFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}
  RegularFile& operator=(RegularFile&&) = delete;
  ~RegularFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }
  uint64_t size() const { return size_; }

 private:
  RegularFile() = default;
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace

Expected<std::shared_ptr<MappedFile>> MappedFile::open(const fs::path& path) {
  REDUCE_ASSIGN(RegularFile f, RegularFile::open(path));
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  if (f.size() > 0) {
    void* p = ::mmap(nullptr, f.size(), PROT_READ, MAP_PRIVATE, f.fd(), 0);
    if (p == MAP_FAILED) return Error{path.string(), std::string("cannot map: ") + std::strerror(errno)};
    file->data_ = static_cast<const std::byte*>(p);
    file->size_ = f.size();
  }
  return file;
}

void MappedFile::release_pages(std::span<const std::byte> range) const {
  if (range.empty() || range.data() < data_ || range.data() + range.size() > data_ + size_) return;
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(range.data()) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(range.data() + range.size());
  // Clean pages of a read-only private mapping: dropping them loses nothing.
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

Expected<std::string> read_file(const fs::path& path, uint64_t max_bytes) {
  REDUCE_ASSIGN(RegularFile f, RegularFile::open(path));
  if (f.size() > max_bytes)
    return Error{path.string(), "the file has " + std::to_string(f.size()) + " bytes, more than the limit of " +
                                    std::to_string(max_bytes)};
  std::string text(f.size(), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(f.fd(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{path.string(), std::string("read error: ") + std::strerror(errno)};
    if (n == 0) break;  // the file shrank
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

AtomicFileWriter::AtomicFileWriter(fs::path path) : path_(std::move(path)) {}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

Status AtomicFileWriter::open() {
  const fs::path dir = path_.has_parent_path() ? path_.parent_path() : fs::path(".");
  std::random_device rd;
  std::string name = ".";
  name += path_.filename().string();
  name += ".tmp" + std::to_string(rd());
  tmp_ = dir / name;
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    tmp_.clear();
    return Error{path_.string(), std::string("cannot write: ") + std::strerror(errno)};
  }
  return {};
}

Status AtomicFileWriter::write(std::span<const std::byte> bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{path_.string(), std::string("cannot write: ") + std::strerror(errno)};
    }
    done += static_cast<size_t>(n);
  }
  return {};
}

Status AtomicFileWriter::commit() {
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0 || ::rename(tmp_.c_str(), path_.c_str()) != 0)
    return Error{path_.string(), std::string("cannot write: ") + std::strerror(errno)};
  tmp_.clear();
  return {};
}

Status write_file_atomic(const fs::path& path, std::span<const std::byte> bytes) {
  AtomicFileWriter out(path);
  REDUCE_TRY(out.open());
  REDUCE_TRY(out.write(bytes));
  return out.commit();
}

Status write_file_atomic(const fs::path& path, const std::string& text) {
  return write_file_atomic(path, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

}  // namespace reduce
