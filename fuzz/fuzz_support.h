// What the harnesses share: a reader that decodes choices from the fuzz input, and a scratch
// folder for the readers that only take paths.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace reduce::fuzz {

// Takes bytes from the front of the input; once they run out every answer is 0 (or empty), so any
// input decodes to something.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool flag() { return byte() & 1; }
  // Uniform enough in [0, n) for n > 0.
  size_t below(size_t n) { return n == 0 ? 0 : (n <= 256 ? byte() % n : u32() % n); }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | byte();
    return v;
  }
  uint64_t u64() { return uint64_t{u32()} << 32 | u32(); }
  // Up to `max` raw bytes, length first.
  std::string text(size_t max) {
    const size_t wanted = below(max + 1);  // before the rest is measured: it takes a byte
    const size_t n = std::min<size_t>(wanted, size_ - std::min(pos_, size_));
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  // `n` bytes, zeros past the end.
  void fill(std::byte* out, size_t n) {
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>(byte());
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// A folder of this process's own under the system temp folder, removed with everything in it when
// the object goes (every input gets a fresh one, so nothing leaks from one input to the next).
class ScratchFolder {
 public:
  ScratchFolder() {
    path_ = std::filesystem::temp_directory_path() / ("reduce-fuzz-" + std::to_string(::getpid()));
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    std::filesystem::create_directories(path_, ec);
    if (ec) {
      std::fprintf(stderr, "cannot create %s: %s\n", path_.c_str(), ec.message().c_str());
      std::abort();
    }
  }
  ~ScratchFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  // Writes `bytes` to `name` in the folder and returns its path.
  std::filesystem::path write(const std::string& name, const uint8_t* data, size_t size) const {
    const auto p = path_ / name;
    std::ofstream out(p, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", p.c_str());
      std::abort();
    }
    return p;
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A broken promise of the code under test (not a refused input): report and abort, so that
// libFuzzer and the replay driver both count it as a crash.
[[noreturn]] inline void invariant_failed(std::string_view what) {
  std::fprintf(stderr, "fuzz invariant failed: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

}  // namespace reduce::fuzz
