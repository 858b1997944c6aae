// Where a model's verdict changes across releases of an engine, and the reduction that follows.
#include "oracle/release_scan.h"

#include <algorithm>
#include <filesystem>

namespace reduce {

std::optional<ReleaseChange> first_change(const std::vector<ReleaseVerdict>& scan) {
  std::optional<size_t> previous;
  for (size_t i = 0; i < scan.size(); ++i) {
    if (!scan[i].ran()) continue;
    if (previous && scan[*previous].verdict->signature.fails() != scan[i].verdict->signature.fails()) {
      const bool regression = scan[i].verdict->signature.fails();
      return ReleaseChange{regression ? *previous : i, regression ? i : *previous, regression};
    }
    previous = i;
  }
  return std::nullopt;
}

namespace {

// Two failures that are not the same one: another kind, or an error or crash that says another thing.
bool another_failure(const FailureSignature& a, const FailureSignature& b) {
  if (a.kind != b.kind) return true;
  if (a.kind == FailureKind::Error || a.kind == FailureKind::Crash) return a.normalized != b.normalized || a.signal != b.signal;
  return false;
}

// The first two releases in a row (of those that ran) that both fail, but another way, before
// `before` (the first fail/pass change, or the end).
std::optional<std::pair<size_t, size_t>> first_failure_change(const std::vector<ReleaseVerdict>& scan, size_t before) {
  std::optional<size_t> previous;
  for (size_t i = 0; i < scan.size() && i <= before; ++i) {
    if (!scan[i].ran()) continue;
    if (previous && scan[*previous].verdict->signature.fails() && scan[i].verdict->signature.fails() &&
        another_failure(scan[*previous].verdict->signature, scan[i].verdict->signature))
      return std::make_pair(*previous, i);
    previous = i;
  }
  return std::nullopt;
}

}  // namespace

std::string release_scan_summary(const std::vector<ReleaseVerdict>& scan, const std::string& model_path,
                                 const std::string& options) {
  size_t ran = 0, failing = 0;
  for (const auto& r : scan) {
    ran += r.ran();
    failing += r.ran() && r.verdict->signature.fails();
  }
  const auto change = first_change(scan);
  const std::string out = " -o " + std::filesystem::path(model_path).stem().string() + ".reduced";  // in the current folder
  // A failure that turns into another (a load error that becomes a wrong shape), said with both.
  const size_t before = change ? std::max(change->passing, change->failing) : scan.size();
  if (const auto changed = first_failure_change(scan, before)) {
    const auto& [a, b] = *changed;
    return "failure changed: " + scan[a].verdict->signature.to_string() + " on " + scan[a].spec + ", " +
           scan[b].verdict->signature.to_string() + " from " + scan[b].spec + ": reduce " + model_path + " --engine " +
           scan[b].spec + options + out;
  }
  if (!change) {
    if (ran == 0) return "no release gave a verdict";
    return failing == ran ? "every release that ran fails: no passing release to take as the reference"
                          : "every release that ran passes";
  }
  const std::string& pass = scan[change->passing].spec;
  const std::string& fail = scan[change->failing].spec;
  const std::string head = change->regression ? "regression: passes on " + pass + ", fails from " + fail
                                              : "fixed: fails up to " + fail + ", passes from " + pass;
  return head + ": reduce " + model_path + " --engine " + fail + " --reference " + pass + options + out;
}

}  // namespace reduce
