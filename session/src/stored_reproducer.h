// The reproducer as the bundle stores it: filled weights as ConstantOfShape nodes where the engine
// confirms the same failure, weights of its own or linked (BundleWeights), and the bundle's sizes.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>

#include "core/model_io.h"
#include "oracle/oracle.h"
#include "session/bundle.h"
#include "report/report.h"

namespace reduce {

// `run` with its filled weights (Candidate::filled) made by ConstantOfShape nodes (core/fill_nodes.h),
// when that model fails on the engine the same way: one engine run, counted in report.engine_runs;
// the weights stored small go to report.filled_stored_small. Otherwise (the engine treats a computed
// weight differently from an initializer, e.g. one it needs constant; or `cancel`) `run` as it is.
CandidateRun stored_reproducer(Oracle& oracle, const Candidate& candidate, const CandidateRun& run,
                               ReductionReport& report, const std::atomic<bool>* cancel);

// How the bundle saves `model`: inline up to 64 MiB of weights, else in model.data; weights of the
// original's external data as `weights` says.
SaveOptions bundle_save_options(const Model& model, BundleWeights weights);

// Removes the weight files of earlier saves that a model just saved in DIR with `saved` does not
// read: model.data when it was saved inline, the links of the original's data files when it was
// saved without them.
void remove_unread_weight_files(const std::filesystem::path& dir, const SaveOptions& saved);

// The bytes of the bundle's model.onnx and the weight files beside it, and whether one of those is a
// link of the original's data file.
struct BundleModelFiles {
  uint64_t bytes = 0;
  bool linked = false;
};
BundleModelFiles bundle_model_files(const std::filesystem::path& dir);

// The size of the files in the bundle DIR and its folders but report.json, report.md and bucket.txt
// (a few KB, written after it is known); hidden temporaries and the lock are not counted.
uint64_t folder_bytes(const std::filesystem::path& dir);

}  // namespace reduce
