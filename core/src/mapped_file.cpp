// Read-only memory maps of files, and atomic writes.
#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

namespace reduce {

namespace fs = std::filesystem;

MappedFile::~MappedFile() {
  if (data_ && size_) ::munmap(const_cast<std::byte*>(data_), size_);
}

Expected<std::shared_ptr<MappedFile>> MappedFile::open(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{path.string(), std::string("cannot open: ") + std::strerror(errno)};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{path.string(), "not a regular file"};
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ > 0) {
    void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      file->size_ = 0;
      return Error{path.string(), std::string("cannot map: ") + std::strerror(err)};
    }
    file->data_ = static_cast<const std::byte*>(p);
  }
  ::close(fd);
  return file;
}

Expected<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path.string(), std::string("cannot open: ") + std::strerror(errno)};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Error{path.string(), "read error"};
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
