// The bundle's "where error is born" part: the original model traced (layerwise and each node
// alone) for report.md, and error.svg next to it.
#pragma once

#include <atomic>
#include <filesystem>

#include "oracle/oracle.h"
#include "report/report.h"

namespace reduce {

// One-node runs a bundle spends on the original model (a bug report needs the culprits, not every
// node; `reduce compare --local-runs` goes further).
inline constexpr size_t kBundleLocalRuns = 200;

// For numeric failures (mismatch, nonfinite): traces the original model and fills the report's
// error-origin fields; draws DIR/error.svg when gnuplot is installed. Nothing for other failures
// or when the layerwise run fails; `cancel` (Ctrl-C) ends it early with nothing added.
Status trace_bundle_error_origin(const std::filesystem::path& dir, Oracle& oracle, ReductionReport& report,
                                 const std::atomic<bool>* cancel);

}  // namespace reduce
