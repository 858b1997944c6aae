// The harnesses' main outside libFuzzer (the gcc test build): replays every file of the folders
// given, then a fixed number of deterministic mutations of them, each in a buffer of exactly its
// size so that sanitizers see reads past the end. A crash aborts the process (a failed test).
//
//   NAME_fuzzer [--mutations N] [--seed S] PATH...   (PATH: a file, or a folder of inputs)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "core/splitmix64.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using Input = std::vector<uint8_t>;

// Inputs no larger than this are made by mutation (libFuzzer's default -max_len is 4096).
constexpr size_t kMaxMutatedSize = 1 << 20;

void run_one(const Input& input) {
  // A heap block of exactly the input's size (an empty input still gets a valid pointer).
  auto copy = std::make_unique<uint8_t[]>(std::max<size_t>(input.size(), 1));
  std::copy(input.begin(), input.end(), copy.get());
  LLVMFuzzerTestOneInput(copy.get(), input.size());
}

Input read_input(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Input(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Files of each path (folders: their regular files, sorted by name so the order is the same on
// every machine). A missing folder is empty: a harness may have no regressions yet.
std::vector<std::filesystem::path> input_files(const std::vector<std::string>& paths) {
  std::vector<std::filesystem::path> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::filesystem::path> found;
      for (const auto& e : std::filesystem::directory_iterator(p))
        if (e.is_regular_file()) found.push_back(e.path());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (std::filesystem::is_regular_file(p, ec)) {
      files.emplace_back(p);
    }
  }
  return files;
}

// Values at the edges of 1-, 2-, 4- and 8-byte integers, as libFuzzer's "interesting" values.
constexpr uint64_t kInteresting[] = {0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff,
                                     0x80000000, 0xffffffff, 0x7fffffffffffffff,
                                     0x8000000000000000, 0xffffffffffffffff, 16, 32, 64, 100, 1000};

// One to four edits: flip a bit, set a byte, truncate, or insert an interesting value.
Input mutate(Input x, reduce::SplitMix64& rng) {
  const int edits = 1 + static_cast<int>(rng.next() % 4);
  for (int e = 0; e < edits; ++e) {
    const uint64_t r = rng.next();
    const size_t pos = x.empty() ? 0 : static_cast<size_t>(rng.next() % x.size());
    switch (r % 5) {
      case 0:
        if (!x.empty()) x[pos] ^= static_cast<uint8_t>(1u << (r >> 8) % 8);
        break;
      case 1:
        if (!x.empty()) x[pos] = static_cast<uint8_t>(r >> 8);
        break;
      case 2:
        x.resize(pos);
        break;
      default: {
        const uint64_t v = kInteresting[(r >> 8) % std::size(kInteresting)];
        const size_t width = size_t{1} << ((r >> 16) % 4);
        const bool little = (r >> 20) & 1;
        uint8_t bytes[8];
        for (size_t i = 0; i < width; ++i) bytes[i] = static_cast<uint8_t>(v >> (8 * (little ? i : width - 1 - i)));
        if ((r >> 21) & 1 && pos + width <= x.size()) std::copy(bytes, bytes + width, x.begin() + pos);
        else x.insert(x.begin() + static_cast<std::ptrdiff_t>(pos), bytes, bytes + width);
      }
    }
  }
  if (x.size() > kMaxMutatedSize) x.resize(kMaxMutatedSize);
  return x;
}

[[noreturn]] void usage() {
  std::fprintf(stderr, "usage: fuzzer [--mutations N] [--seed S] PATH...\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t mutations = 1000, seed = 1;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--mutations" || arg == "--seed") && i + 1 < argc) {
      char* end = nullptr;
      const uint64_t v = std::strtoull(argv[++i], &end, 10);
      if (!end || *end) usage();
      (arg == "--mutations" ? mutations : seed) = v;
    } else if (arg.starts_with("--")) {
      usage();
    } else {
      paths.push_back(arg);
    }
  }
  std::vector<Input> inputs;
  for (const auto& f : input_files(paths)) {
    inputs.push_back(read_input(f));
    run_one(inputs.back());
  }
  if (inputs.empty()) inputs.emplace_back();  // mutations of the empty input
  reduce::SplitMix64 rng(seed);
  for (uint64_t k = 0; k < mutations; ++k) run_one(mutate(inputs[k % inputs.size()], rng));
  std::printf("replayed %zu inputs and %llu mutations\n", input_files(paths).size(),
              static_cast<unsigned long long>(mutations));
  return 0;
}
