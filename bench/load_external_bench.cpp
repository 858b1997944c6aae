// Measures loading a model with 1 GiB of external weights (time, peak RSS, zero-copy) and saving candidates that share them.
//
// Usage: load_external_bench [--dir BASE] [--runs N] [--keep]
// The parent only orchestrates: generation, each load and the candidate saves run in fresh child
// processes (fork + exec of this program), so no process's peak RSS includes another's buffers.
// Children print `key=value` tokens on stdout; the parent prints a markdown table.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

#include "core/extract.h"
#include "core/model_io.h"

namespace fs = std::filesystem;
using namespace reduce;

namespace {

constexpr int kWeights = 16;
constexpr int64_t kSide = 4096;  // each weight is float[4096,4096] = 64 MiB
constexpr int kSliceBegin = 4;   // the candidate keeps nodes [4, 8): an extracted middle slice
constexpr int kSliceEnd = 8;
const char* const kModelName = "big.onnx";
const char* const kDataName = "big.data";
const char* const kSharedName = "weights.data";

// Thrown rather than exiting, so the parent still removes the generated files.
[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(message); }
void check(const Status& s) {
  if (!s) fail(s.error().message());
}
template <typename T>
T check(Expected<T> e) {
  if (!e) fail(e.error().message());
  return std::move(e).value();
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

long maxrss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;  // KiB on Linux
}

// A field of /proc/self/status in KiB ("VmHWM", "VmRSS"). VmHWM is the peak of this process
// image only, while ru_maxrss may carry the peak of the image exec replaced.
long proc_status_kib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  return -1;
}

// The file backing the mapping that contains `p`, or "" when it is anonymous or not mapped.
std::string mapped_file_of(const void* p) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) != 2 || addr < lo || addr >= hi) continue;
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, path;
    fields >> range >> perms >> offset >> dev >> inode;
    std::getline(fields >> std::ws, path);
    return path;
  }
  return {};
}

float pattern(int weight, size_t i) { return static_cast<float>((i + weight) & 1023) * (1.0f / 1024); }

// x -> Add(w0) -> Mul(w1) -> Add(w2) -> ... -> y, every weight a 64 MiB initializer.
Model make_big_model() {
  Model m;
  m.ir_version = 8;
  m.opset_imports = {{"", 17}};
  m.producer_name = "load_external_bench";
  const Shape shape{kSide, kSide};
  const auto type = ValueType::tensor(DType::Float, shape);
  m.graph.name = "big";
  m.graph.inputs.push_back({"x", type, {}});
  std::string prev = "x";
  for (int k = 0; k < kWeights; ++k) {
    Tensor w = check(Tensor::allocate(DType::Float, shape));
    auto values = w.mutable_data<float>();
    for (size_t i = 0; i < values.size(); ++i) values[i] = pattern(k, i);
    // Appending (not "w" + ...) avoids a bogus GCC 12 -Wrestrict warning.
    const std::string wname = std::string("w").append(std::to_string(k));
    const std::string out = std::string("v").append(std::to_string(k));
    m.graph.initializers.push_back({wname, std::move(w), {}});
    m.graph.nodes.push_back({std::string("n").append(std::to_string(k)), k % 2 ? "Mul" : "Add", "", {prev, wname}, {out}, {}, {}, {}});
    prev = out;
  }
  m.graph.outputs.push_back({prev, type, {}});
  return m;
}

// Counts initializers that are read-only views into `data_file` (not copies).
int count_mapped_views(const Model& m, const fs::path& data_file) {
  const std::string want = fs::canonical(data_file).string();
  int n = 0;
  for (const auto& init : m.graph.initializers)
    if (!init.tensor.writable() && mapped_file_of(init.tensor.bytes().data()) == want) ++n;
  return n;
}

int child_generate(const fs::path& dir) {
  auto start = std::chrono::steady_clock::now();
  const Model m = make_big_model();
  const double fill_ms = ms_since(start);
  start = std::chrono::steady_clock::now();
  SaveOptions options;
  options.weights = SaveOptions::Weights::External;
  options.external_file = kDataName;
  check(save_model(m, dir / kModelName, options));
  std::printf("fill_ms=%.1f save_ms=%.1f onnx_bytes=%ju data_bytes=%ju\n", fill_ms, ms_since(start),
              static_cast<uintmax_t>(fs::file_size(dir / kModelName)),
              static_cast<uintmax_t>(fs::file_size(dir / kDataName)));
  return 0;
}

int child_load(const fs::path& dir) {
  const long maxrss_before = maxrss_kib(), hwm_before = proc_status_kib("VmHWM");
  const auto start = std::chrono::steady_clock::now();
  const Model m = check(load_model(dir / kModelName));
  const double load_ms = ms_since(start);
  // Measured before anything below could touch a weight page.
  const long maxrss = maxrss_kib(), hwm = proc_status_kib("VmHWM");
  uint64_t weight_bytes = 0;
  for (const auto& init : m.graph.initializers) weight_bytes += init.tensor.byte_size();
  std::printf("load_ms=%.3f maxrss_before_kib=%ld maxrss_kib=%ld hwm_before_kib=%ld hwm_kib=%ld "
              "initializers=%zu mapped_views=%d weight_bytes=%ju\n",
              load_ms, maxrss_before, maxrss, hwm_before, hwm, m.graph.initializers.size(),
              count_mapped_views(m, dir / kDataName), static_cast<uintmax_t>(weight_bytes));
  return 0;
}

// Saves `candidate` `runs` times next to the shared weights; prints the median time and the size.
void save_candidate(const Model& candidate, const SharedWeights& shared, const fs::path& path,
                    const std::string& key, int runs) {
  std::vector<double> times;
  SaveOptions options;
  options.shared = &shared;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    check(save_model(candidate, path, options));
    times.push_back(ms_since(start));
  }
  std::sort(times.begin(), times.end());
  std::printf("%s_ms=%.3f %s_bytes=%ju ", key.c_str(), times[times.size() / 2], key.c_str(),
              static_cast<uintmax_t>(fs::file_size(path)));
}

int child_save_candidates(const fs::path& dir, int runs) {
  const Model m = check(load_model(dir / kModelName));
  auto start = std::chrono::steady_clock::now();
  const SharedWeights shared = check(write_shared_weights(m, dir / kSharedName));
  std::printf("write_shared_ms=%.1f shared_bytes=%ju ", ms_since(start),
              static_cast<uintmax_t>(fs::file_size(dir / kSharedName)));
  start = std::chrono::steady_clock::now();
  const Extractor extractor = check(Extractor::create(m));
  std::vector<size_t> nodes;
  for (size_t i = kSliceBegin; i < kSliceEnd; ++i) nodes.push_back(i);
  const Model slice = check(extractor.extract(nodes));
  std::printf("extract_ms=%.3f ", ms_since(start));
  save_candidate(slice, shared, dir / "slice.onnx", "slice", runs);
  save_candidate(m, shared, dir / "whole.onnx", "whole", runs);
  std::printf("maxrss_kib=%ld hwm_kib=%ld rss_kib=%ld ", maxrss_kib(), proc_status_kib("VmHWM"),
              proc_status_kib("VmRSS"));

  // The saved slice must load back as views of the shared file, with the original values.
  const Model back = check(load_model(dir / "slice.onnx"));
  bool same = back.graph.initializers.size() == static_cast<size_t>(kSliceEnd - kSliceBegin);
  for (size_t i = 0; same && i < back.graph.initializers.size(); ++i) {
    const auto values = back.graph.initializers[i].tensor.data<float>();
    const int k = kSliceBegin + static_cast<int>(i);
    same = values.size() == static_cast<size_t>(kSide * kSide) && values[0] == pattern(k, 0) &&
           values[values.size() - 1] == pattern(k, values.size() - 1);
  }
  const Status checked = check_model_file(dir / "slice.onnx");
  std::printf("slice_reload_views=%d slice_values_ok=%d slice_checker_ok=%d\n",
              count_mapped_views(back, dir / kSharedName), same ? 1 : 0, checked.ok() ? 1 : 0);
  if (!checked) std::fprintf(stderr, "load_external_bench: %s\n", checked.error().message().c_str());
  return 0;
}

// Runs this program again with `args`; returns the key=value tokens it printed.
std::map<std::string, std::string> run_child(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) fail("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) fail("fork failed");
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    static std::string self = "/proc/self/exe";
    argv.push_back(self.data());
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(self.c_str(), argv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("child '" + args[0] + "' failed");
  std::map<std::string, std::string> kv;
  std::istringstream tokens(out);
  for (std::string t; tokens >> t;)
    if (auto eq = t.find('='); eq != std::string::npos) kv[t.substr(0, eq)] = t.substr(eq + 1);
  return kv;
}

double num(const std::map<std::string, std::string>& kv, const std::string& key) {
  auto it = kv.find(key);
  if (it == kv.end()) fail("a child did not report '" + key + "'");
  return std::stod(it->second);
}

std::string mib(double kib_or_bytes, double per_mib) {
  char s[64];
  std::snprintf(s, sizeof s, "%.1f MiB", kib_or_bytes / per_mib);
  return s;
}

// Removes the generated gigabytes however the parent leaves main().
struct RemoveOnExit {
  fs::path dir;
  bool keep = false;
  ~RemoveOnExit() {
    if (keep) return;
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

int orchestrate(const fs::path& base, int runs, bool keep) {
  std::string templ = (base / "load_external_bench.XXXXXX").string();
  if (!mkdtemp(templ.data())) fail("cannot create a folder in " + base.string());
  RemoveOnExit guard{templ, keep};
  const std::string dir = templ;
  std::fprintf(stderr, "load_external_bench: generating %d x 64 MiB weights in %s\n", kWeights, dir.c_str());

  const auto gen = run_child({"--child-generate", dir});
  std::vector<std::map<std::string, std::string>> loads;
  for (int r = 0; r < runs; ++r) loads.push_back(run_child({"--child-load", dir}));
  const auto saves = run_child({"--child-save", dir, std::to_string(runs)});

  std::vector<double> load_ms;
  double maxrss = 0, maxrss_before = 0, hwm = 0, views = 0;
  for (const auto& l : loads) {
    load_ms.push_back(num(l, "load_ms"));
    maxrss = std::max(maxrss, num(l, "maxrss_kib"));
    maxrss_before = std::max(maxrss_before, num(l, "maxrss_before_kib"));
    hwm = std::max(hwm, num(l, "hwm_kib"));
    views = std::max(views, num(l, "mapped_views"));
  }
  std::sort(load_ms.begin(), load_ms.end());
  const double weights = num(loads[0], "weight_bytes");
  char line[256];
  auto row = [&](const std::string& what, const std::string& value) {
    std::printf("| %s | %s |\n", what.c_str(), value.c_str());
  };
  std::printf("| Measure | Value |\n|---|---|\n");
  std::snprintf(line, sizeof line, "%d float initializers of 64 MiB (%s) feeding %d Add/Mul nodes", kWeights,
                mib(weights, 1 << 20).c_str(), kWeights);
  row("Model", line);
  std::snprintf(line, sizeof line, "%.0f ms (filling the tensors took %.0f ms more)", num(gen, "save_ms"),
                num(gen, "fill_ms"));
  row("save_model, Weights::External (1 GiB written)", line);
  std::snprintf(line, sizeof line, "%.2f ms (min %.2f, max %.2f)", load_ms[load_ms.size() / 2], load_ms.front(),
                load_ms.back());
  row("load_model wall time, median of " + std::to_string(runs) + " fresh processes", line);
  row("Peak RSS after load_model (ru_maxrss, max over runs)",
      mib(maxrss, 1024) + " (" + mib(maxrss_before, 1024) + " before loading)");
  row("Peak RSS of the process image (VmHWM)", mib(hwm, 1024));
  std::snprintf(line, sizeof line, "%.0f of %d (read-only, pointer inside the mapping of %s)", views, kWeights,
                kDataName);
  row("Initializers that are views of the mapped file", line);
  std::snprintf(line, sizeof line, "%.0f ms (%s, once per reduction)", num(saves, "write_shared_ms"),
                mib(num(saves, "shared_bytes"), 1 << 20).c_str());
  row("write_shared_weights", line);
  std::snprintf(line, sizeof line, "%.3f ms (Extractor::create + extract of nodes %d..%d)", num(saves, "extract_ms"),
                kSliceBegin, kSliceEnd - 1);
  row("Extract the 4-node candidate", line);
  std::snprintf(line, sizeof line, "%.3f ms, .onnx of %.0f bytes", num(saves, "slice_ms"), num(saves, "slice_bytes"));
  row("Save a 4-node candidate referencing shared weights (median of " + std::to_string(runs) + ")", line);
  std::snprintf(line, sizeof line, "%.3f ms, .onnx of %.0f bytes", num(saves, "whole_ms"), num(saves, "whole_bytes"));
  row("Save the whole 16-node model referencing shared weights (median of " + std::to_string(runs) + ")", line);
  std::snprintf(line, sizeof line, "%s; %.0f of %d initializers map %s; ONNX checker %s",
                num(saves, "slice_values_ok") ? "values match" : "VALUES DIFFER",
                num(saves, "slice_reload_views"), kSliceEnd - kSliceBegin, kSharedName,
                num(saves, "slice_checker_ok") ? "passes" : "FAILS");
  row("The saved candidate reloaded", line);
  row("Peak RSS of the candidate-saving process (ru_maxrss; file-backed pages read by write_shared_weights)",
      mib(num(saves, "maxrss_kib"), 1024) + ", " + mib(num(saves, "rss_kib"), 1024) + " resident at the end");
  if (keep) std::fprintf(stderr, "load_external_bench: kept %s\n", dir.c_str());
  return views == kWeights && num(saves, "slice_values_ok") ? 0 : 1;
}

int run(const std::vector<std::string>& args) {
  if (args.size() >= 2 && args[0] == "--child-generate") return child_generate(args[1]);
  if (args.size() >= 2 && args[0] == "--child-load") return child_load(args[1]);
  if (args.size() >= 3 && args[0] == "--child-save") return child_save_candidates(args[1], std::stoi(args[2]));

  fs::path base = fs::temp_directory_path();
  int runs = 5;
  bool keep = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--dir" && i + 1 < args.size()) base = args[++i];
    else if (args[i] == "--runs" && i + 1 < args.size()) runs = std::max(1, std::stoi(args[++i]));
    else if (args[i] == "--keep") keep = true;
    else {
      std::fprintf(stderr, "usage: load_external_bench [--dir BASE] [--runs N] [--keep]\n");
      return 2;
    }
  }
  return orchestrate(base, runs, keep);
}
}  // namespace

int main(int argc, char** argv) {
  try {
    return run({argv + 1, argv + argc});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "load_external_bench: %s\n", e.what());
    return 1;
  }
}
