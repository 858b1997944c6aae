// A model checked on several releases of an engine (`reduce check --engine ort@A,ort@B,...`): where the
// verdict changes, and the reduction that change asks for (the failing release against the passing one).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "oracle/verdict.h"

namespace reduce {

// One release of the scan: its spec, and its verdict, or why it did not run (an install that failed,
// a release that cannot run here).
struct ReleaseVerdict {
  std::string spec;
  std::optional<Verdict> verdict;
  std::string not_run;  // the one-line reason when there is no verdict
  // Whether the release gave a verdict on the model (an invalid one is the tool's limit: none).
  bool ran() const { return verdict && !verdict->invalid; }
};

// Where the verdict changes first between two releases that ran, in the order given.
struct ReleaseChange {
  size_t passing = 0, failing = 0;  // indexes into the scan
  bool regression = false;          // the failing release comes after the passing one
};
std::optional<ReleaseChange> first_change(const std::vector<ReleaseVerdict>& scan);

// The scan's last line: the first change, in the order given (oldest release first), and the `reduce`
// command for it ("regression: passes on ort@1.16.3, fails from ort@1.17.0: reduce dir/m.onnx --engine
// ort@1.17.0 --reference ort@1.16.3 -o m.reduced"); a failure that turns into another between two
// failing releases, when it comes first ("failure changed: error: ... on A, shape: ... from B: reduce
// m.onnx --engine B -o m.reduced"); or that every release that ran fails (or passes).
// `options`: the user's other options for that command, as shell words (every one that decided the
// verdicts: --inputs, --expected, tolerances, --fail-regex), so that it runs as printed.
std::string release_scan_summary(const std::vector<ReleaseVerdict>& scan, const std::string& model_path,
                                 const std::string& options = {});

}  // namespace reduce
