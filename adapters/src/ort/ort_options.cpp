// Parses and prints `ort[@VERSION]:OPTIONS`, and finds the installation of each release.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

#include "adapters/cache_folder.h"
#include "adapters/ort.h"


namespace reduce {

extern const char kOrtInstallScript[];  // scripts/ort/install.sh, embedded at build time

namespace {

constexpr std::string_view kLevels[] = {"disable", "basic", "extended", "all"};
// The execution providers onnxruntime-node can list (on some platform); which ones the installed
// package has is asked at run time (the worker checks `ep=` against it).
constexpr std::string_view kProviders[] = {"cpu", "cuda", "tensorrt", "webgpu", "dml", "coreml"};
constexpr int kMaxThreads = 1024;
constexpr size_t kMaxReleaseChars = 64;

template <size_t N>
std::string joined(const std::string_view (&names)[N], std::string_view separator = ", ") {
  std::string out;
  for (auto n : names) out += (out.empty() ? "" : std::string(separator)) + std::string(n);
  return out;
}

}  // namespace

std::string_view to_string(OrtOptimization level) { return kLevels[static_cast<int>(level)]; }

std::string_view package_name(OrtPackage package) {
  return package == OrtPackage::Web ? "onnxruntime-web" : "onnxruntime-node";
}

Status check_ort_release(std::string_view release) {
  const auto bad = [&] {
    return make_error("'" + std::string(release.substr(0, kMaxReleaseChars)) +
                      "' is not a release number (expected MAJOR.MINOR.PATCH, e.g. 1.16.3)");
  };
  if (release.find(',') != std::string_view::npos)
    return make_error("a list of releases (ort@A,ort@B,...) is for `reduce check`, which gives a verdict per release");
  if (release.empty() || release.size() > kMaxReleaseChars) return bad();
  // Three dot-separated numbers, then an optional -SUFFIX of letters, digits, '.' and '-'.
  const size_t dash = std::min(release.find('-'), release.size());
  const std::string_view numbers = release.substr(0, dash), suffix = release.substr(dash);
  int parts = 0;
  for (size_t start = 0; start <= numbers.size(); ++parts) {
    const size_t dot = std::min(numbers.find('.', start), numbers.size());
    const std::string_view part = numbers.substr(start, dot - start);
    if (part.empty() || !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) return bad();
    // npm names releases without leading zeros (semver): `01.016.03` would install and then not be found.
    if (part.size() > 1 && part[0] == '0')
      return make_error("'" + std::string(release.substr(0, kMaxReleaseChars)) +
                        "' is not a release number: no leading zeros (npm's release numbers are like 1.16.3)");
    start = dot + 1;
  }
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-'; };
  if (parts != 3 || suffix.size() == 1 || !std::all_of(suffix.begin(), suffix.end(), word)) return bad();
  return {};
}

std::filesystem::path ort_release_folder(OrtPackage package, std::string_view release,
                                         const std::vector<std::string>& env, const std::filesystem::path& cache_folder) {
  std::filesystem::path folder = ort_install_folder(env, cache_folder);
  if (!folder.has_filename()) folder = folder.parent_path();  // "DIR/"
  const bool standard = release.empty() || release == kOrtDefaultRelease;
  if (package == OrtPackage::Node && standard) return folder;
  std::string name = package == OrtPackage::Web ? "ort-web" : "ort";
  if (!standard) name += "-" + std::string(release);
  return folder.parent_path() / name;
}

std::vector<std::string> ort_install_command(const std::string& word, const std::filesystem::path& folder) {
  // bash -c SCRIPT NAME ARGS...: NAME is the script's $0, the rest its $1 $2; nothing is interpreted twice.
  return {"bash", "-c", kOrtInstallScript, "install.sh", word, folder.string()};
}

Expected<OrtOptions> parse_ort_options(std::string_view options, OrtPackage package) {
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
      if (package == OrtPackage::Web) return make_error("ort-web runs onnxruntime-web's wasm backend only: ep= is for ort");
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

std::filesystem::path ort_install_folder(const std::vector<std::string>& env, const std::filesystem::path& cache_folder) {
  if (auto dir = environment_value("REDUCE_ORT_DIR", env); !dir.empty()) return dir;
  return reduce_cache_folder(cache_folder, env) / "ort";
}

bool ort_folder_is_chosen(const std::vector<std::string>& env) { return !environment_value("REDUCE_ORT_DIR", env).empty(); }

}  // namespace reduce
