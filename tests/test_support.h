// Helpers shared by the test suites: temporary folders and text models.
#pragma once

#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "core/model_io.h"

// The sanitizer runtime's entry points, declared weak: null unless the runtime is linked in (a
// REDUCE_SANITIZE build, where the test drivers link it but are not instrumented themselves, so
// compile-time checks such as __SANITIZE_ADDRESS__ cannot tell; tests/CMakeLists.txt).
extern "C" {
__attribute__((weak)) size_t __sanitizer_get_current_allocated_bytes();
__attribute__((weak)) int __asan_address_is_poisoned(const volatile void* addr);
}

namespace reduce::testing {

// True when AddressSanitizer's runtime runs this process (and owns the heap).
inline bool asan_runtime() { return __asan_address_is_poisoned != nullptr; }

// Bytes the heap has handed out and not taken back, by the allocator's own accounting (ASan's
// when its runtime owns the heap).
inline size_t heap_bytes_in_use() {
  if (asan_runtime()) return __sanitizer_get_current_allocated_bytes();
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

// Resident pages of this process, in bytes (/proc/self/statm's second field).
inline size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// Whether reading memory never written costs no resident memory: the kernel maps its shared zero
// page for it. Some virtual machines turn that off (Linux's `pvm_no_zero_page`), and there every
// page read is allocated, so a test of "zeros are not resident" has nothing to measure.
inline bool reading_untouched_memory_is_free() {
  const size_t size = size_t{32} << 20;
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  const size_t before = resident_bytes();
  unsigned sum = 0;
  for (size_t i = 0; i < size; i += 4096) sum += static_cast<const volatile unsigned char*>(p)[i];
  const bool free = sum == 0 && resident_bytes() < before + size / 2;
  munmap(p, size);
  return free;
}

// The kernel's high-water mark of resident memory (VmHWM), and its reset to the current resident
// size: what a step holds at its peak, whatever the allocator (mmap, malloc, protobuf strings).
inline size_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}
inline bool reset_peak_resident() { return static_cast<bool>(std::ofstream("/proc/self/clear_refs") << "5"); }

// A fresh folder removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("reduce-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline Model parse_model(const std::string& text) {
  auto m = parse_model_text(text);
  if (!m) ADD_FAILURE() << m.error().message();
  return m.ok() ? std::move(m).value() : Model{};
}

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// True when `program` is an executable in one of PATH's folders (an optional tool such as gnuplot).
inline bool program_in_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((std::filesystem::path(dir) / program).c_str(), X_OK) == 0) return true;
  return false;
}

}  // namespace reduce::testing
