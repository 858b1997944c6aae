// Parses and prints `ort:OPTIONS`, and finds the onnxruntime-node installation.
#include <charconv>
#include <cstdlib>

#include "adapters/ort.h"

#ifndef REDUCE_ORT_DEFAULT_DIR
#define REDUCE_ORT_DEFAULT_DIR ".cache/ort"
#endif

namespace reduce {

namespace {

constexpr std::string_view kLevels[] = {"disable", "basic", "extended", "all"};
// The execution providers onnxruntime-node can list (on some platform); which ones the installed
// package has is asked at run time (the worker checks `ep=` against it).
constexpr std::string_view kProviders[] = {"cpu", "cuda", "tensorrt", "webgpu", "dml", "coreml"};
constexpr int kMaxThreads = 1024;

template <size_t N>
std::string joined(const std::string_view (&names)[N], std::string_view separator = ", ") {
  std::string out;
  for (auto n : names) out += (out.empty() ? "" : std::string(separator)) + std::string(n);
  return out;
}

}  // namespace

std::string_view to_string(OrtOptimization level) { return kLevels[static_cast<int>(level)]; }

Expected<OrtOptions> parse_ort_options(std::string_view options) {
  OrtOptions out;
  if (options.empty()) return out;
  for (size_t start = 0;;) {
    const size_t comma = std::min(options.find(',', start), options.size());
    const std::string_view word = options.substr(start, comma - start);
    const size_t eq = word.find('=');
    const std::string_view key = word.substr(0, eq), value = eq == std::string_view::npos ? "" : word.substr(eq + 1);
    if (word.empty()) return make_error("empty option in '" + std::string(options) + "'");
    if (key == "opt" && eq != std::string_view::npos) {
      bool found = false;
      for (size_t i = 0; i < std::size(kLevels); ++i)
        if (kLevels[i] == value) {
          out.optimization = static_cast<OrtOptimization>(i);
          found = true;
        }
      if (!found) return make_error("unknown optimization level '" + std::string(value) + "' (known: " + joined(kLevels) + ")");
    } else if (key == "threads" && eq != std::string_view::npos) {
      int n = -1;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || end != value.data() + value.size() || n < 0 || n > kMaxThreads)
        return make_error("threads=" + std::string(value) + ": expected a number of threads from 0 to " +
                          std::to_string(kMaxThreads) + " (0: ONNX Runtime's default)");
      out.threads = n;
    } else if (key == "ep" && eq != std::string_view::npos) {
      bool found = false;
      for (auto p : kProviders) found = found || p == value;
      if (!found) return make_error("unknown execution provider '" + std::string(value) + "' (known: " + joined(kProviders) + ")");
      out.provider = std::string(value);
    } else {
      return make_error("unknown option '" + std::string(word) + "' (known: opt=" + joined(kLevels, "|") + ", threads=N, ep=NAME)");
    }
    if (comma == options.size()) break;
    start = comma + 1;
  }
  return out;
}

std::string to_string(const OrtOptions& options) {
  std::string out;
  auto add = [&](const std::string& word) { out += (out.empty() ? "" : ",") + word; };
  if (options.optimization != OrtOptimization::All) add("opt=" + std::string(to_string(options.optimization)));
  if (options.threads != 0) add("threads=" + std::to_string(options.threads));
  if (options.provider != "cpu") add("ep=" + options.provider);
  return out;
}

std::filesystem::path ort_install_folder(const std::vector<std::string>& env) {
  constexpr std::string_view kName = "REDUCE_ORT_DIR=";
  for (auto it = env.rbegin(); it != env.rend(); ++it)
    if (it->compare(0, kName.size(), kName) == 0 && it->size() > kName.size()) return it->substr(kName.size());
  if (const char* dir = std::getenv("REDUCE_ORT_DIR"); dir && *dir) return dir;
  return REDUCE_ORT_DEFAULT_DIR;
}

}  // namespace reduce
