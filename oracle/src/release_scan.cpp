// Where a model's verdict changes across releases of an engine, and the reduction that follows.
#include "oracle/release_scan.h"

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

std::string release_scan_summary(const std::vector<ReleaseVerdict>& scan, const std::string& model_path,
                                 const std::string& options) {
  size_t ran = 0, failing = 0;
  for (const auto& r : scan) {
    ran += r.ran();
    failing += r.ran() && r.verdict->signature.fails();
  }
  const auto change = first_change(scan);
  if (!change) {
    if (ran == 0) return "no release gave a verdict";
    return failing == ran ? "every release that ran fails: no passing release to take as the reference"
                          : "every release that ran passes";
  }
  const std::string& pass = scan[change->passing].spec;
  const std::string& fail = scan[change->failing].spec;
  const std::string head = change->regression ? "regression: passes on " + pass + ", fails from " + fail
                                              : "fixed: fails up to " + fail + ", passes from " + pass;
  return head + ": reduce " + model_path + " --engine " + fail + " --reference " + pass + options + " -o " +
         std::filesystem::path(model_path).stem().string() + ".reduced";  // in the current folder
}

}  // namespace reduce
