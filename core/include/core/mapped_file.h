// MappedFile: a read-only memory map of a whole file, shared by the tensors that view it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

#include "core/status.h"

namespace reduce {

class MappedFile {
 public:
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Only regular files: FIFOs, devices and sockets are refused without blocking.
  static Expected<std::shared_ptr<MappedFile>> open(const std::filesystem::path& path);

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const std::filesystem::path& path() const { return path_; }
  // Drops the pages of `range` (a part of bytes()) from this process's resident memory; the page
  // cache keeps them, and the next read maps them back. For values read once in a while, so that
  // a long reduction reading a large file does not end up holding all of it.
  void release_pages(std::span<const std::byte> range) const;

 private:
  MappedFile() = default;
  std::filesystem::path path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

// Reads a small whole regular file into memory (for protobuf text, test scripts); FIFOs and
// devices are refused without blocking, files over `max_bytes` before reading.
Expected<std::string> read_file(const std::filesystem::path& path, uint64_t max_bytes = uint64_t{1} << 31);
// Writes a file in pieces, atomically: the data goes to a temporary file in the same folder that
// commit() renames into place. Without commit() (an error, an exception) the temporary is removed.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::filesystem::path path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  Status open();
  Status write(std::span<const std::byte> bytes);
  Status commit();

 private:
  std::filesystem::path path_;
  std::filesystem::path tmp_;
  int fd_ = -1;
};

// Writes `bytes` to `path` atomically: a temporary file in the same folder, then rename.
Status write_file_atomic(const std::filesystem::path& path, std::span<const std::byte> bytes);
Status write_file_atomic(const std::filesystem::path& path, const std::string& text);

}  // namespace reduce
