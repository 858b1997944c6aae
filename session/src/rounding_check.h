// "Is it a bug at all?": whether a reproducer's mismatch is what reduced precision itself gives.
#pragma once

#include <atomic>

#include "oracle/oracle.h"
#include "report/report.h"

namespace reduce {

// For a mismatch (or non-finite values) on an engine that computes in FP16 or BF16, runs the
// reproducer once on the exact reduced-precision reference (`fp16:ref`, `bf16:ref`, the engine's
// FP32 nodes kept) and records in report.rounding whether it fails the same way: then the error is
// what rounding to that precision gives on this subgraph, not an engine bug.
void check_rounding(Oracle& oracle, const CandidateRun& run, const std::atomic<bool>* cancel, ReductionReport& report);

}  // namespace reduce
