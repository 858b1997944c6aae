// The reproducer as the bundle stores it (stored_reproducer.h).
#include "stored_reproducer.h"

#include "core/fill_nodes.h"

namespace reduce {

namespace fs = std::filesystem;

namespace {

// Weights stay inline unless they are large (then one model.data file next to model.onnx).
constexpr uint64_t kInlineWeightLimit = 64ull << 20;
// A reproducer that reads more than half of an original data file larger than this keeps the link.
constexpr uint64_t kCopyLimit = 1ull << 30;

// model.original.data, model.original1.data, ...: SaveOptions::link_external_data's links.
bool is_weight_link(const std::string& name) {
  return name.rfind("model.original", 0) == 0 && name.ends_with(".data");
}

}  // namespace

CandidateRun stored_reproducer(Oracle& oracle, const Candidate& candidate, const CandidateRun& run,
                               ReductionReport& report, const std::atomic<bool>* cancel) {
  report.filled_stored_small.clear();
  FillNodes small = fills_as_nodes(run.model, candidate.filled);
  if (small.replaced.empty()) return run;
  CandidateRun stored{std::move(small.model), run.inputs, run.expected};
  const Verdict verdict = oracle.evaluate_probe(stored, cancel);
  if (!verdict.cancelled) report.count_runs_after_search(1);
  if (!verdict.fails() || oracle.target().match(verdict) != SignatureMatch::Same) return run;
  report.filled_stored_small = std::move(small.replaced);
  return stored;
}

SaveOptions bundle_save_options(const Model& model, BundleWeights weights) {
  uint64_t weight_bytes = 0;
  for (const auto& init : model.graph.initializers) weight_bytes += init.tensor.byte_size();
  const ExternalDataUse use = external_data_use(model);
  SaveOptions so;
  so.link_external_data = weights == BundleWeights::LinkOriginal ||
                          (use.file_bytes > kCopyLimit && 2 * use.viewed_bytes > use.file_bytes);
  if (weight_bytes > kInlineWeightLimit) {
    so.weights = SaveOptions::Weights::External;
    so.external_file = "model.data";
  }
  return so;
}

void remove_unread_weight_files(const fs::path& dir, const SaveOptions& saved) {
  std::error_code ec;
  if (saved.weights == SaveOptions::Weights::Inline) fs::remove(dir / "model.data", ec);
  if (saved.link_external_data) return;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (is_weight_link(it->path().filename().string())) fs::remove(it->path(), ec);
}

BundleModelFiles bundle_model_files(const fs::path& dir) {
  BundleModelFiles files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool link = is_weight_link(name);
    if (name != "model.onnx" && name != "model.data" && !link) continue;
    std::error_code size_ec;
    const uintmax_t size = fs::file_size(it->path(), size_ec);
    if (!size_ec) files.bytes += size;
    files.linked |= link;
  }
  return files;
}

uint64_t folder_bytes(const fs::path& dir) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it.depth() == 0 && (name == "report.json" || name == "report.md" || name == "bucket.txt")) continue;
    if (name.starts_with(".")) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    std::error_code size_ec;
    if (it->is_regular_file(size_ec))
      if (const uintmax_t size = fs::file_size(it->path(), size_ec); !size_ec) bytes += size;
  }
  return bytes;
}

}  // namespace reduce
