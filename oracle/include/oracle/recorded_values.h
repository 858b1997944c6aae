// RecordedValues: every value of one reference run of the full model, kept so that candidate
// subgraphs are fed exactly what their cut values were inside the original model, and compared
// with what their outputs were, without running the reference again.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/mapped_file.h"
#include "core/memory_ledger.h"
#include "core/model.h"
#include "core/tensor_file.h"
#include "engine/engine.h"

namespace reduce {

struct RecordOptions {
  // Values of at least `spill_bytes` bytes are written to a spill file in `spill_dir` as the
  // reference computes them and memory-mapped back (the page cache holds them, not the heap);
  // smaller ones stay in memory until they total `memory_budget` bytes, and go to the file after.
  uint64_t memory_budget = uint64_t{8} << 20;
  uint64_t spill_bytes = uint64_t{1} << 20;
  std::filesystem::path spill_dir;  // default: a fresh folder in the system temp folder
  // When set and it becomes true, the reference run is abandoned (an error; see RunOptions::cancel).
  const std::atomic<bool>* cancel = nullptr;
  // Where the values kept in memory are charged while the recording lives (null: nowhere).
  std::shared_ptr<MemoryLedger> ledger;
  // Values given instead of computed (expected values from a file, see bind_expected): recorded as
  // given. The reference computes the rest; when it computes a given one too, `on_given` sees both
  // (the oracle compares them), and a dtype or shape that differs is an error naming
  // `given_source`. When every node output is given, the reference does not run at all.
  std::vector<NamedTensor> given;
  std::string given_source;
  std::function<void(const std::string& name, const Tensor& computed, const Tensor& given)> on_given;
  // When the reference cannot prepare the whole model (a contrib op, a plugin, an op it lacks) and
  // the expected values come from elsewhere: record what it can, every value that does not depend
  // on a node it refuses (RecordedValues::refused()), instead of failing.
  bool partial = false;
};

class RecordedValues {
 public:
  // Runs `reference` on the full model with `inputs` and records every tensor value: graph
  // inputs, initializers are not copied (the model has them), node outputs (or the given ones). A reference that
  // streams its values (PreparedModel::streams_outputs) runs once and holds only what its next
  // nodes need; another runs once per group of values that fit in 1 GiB.
  static Expected<RecordedValues> record(const Model& model, Engine& reference, const std::vector<NamedTensor>& inputs,
                                         const RecordOptions& options = {});
  RecordedValues(RecordedValues&&) = default;
  RecordedValues& operator=(RecordedValues&&) = default;
  ~RecordedValues();

  // The recorded value (or the graph's initializer), or nullptr.
  const Tensor* find(std::string_view name) const;
  uint64_t bytes_in_memory() const { return bytes_in_memory_; }
  uint64_t bytes_spilled() const { return bytes_spilled_; }
  // Lets the resident pages of a spilled value (or of a view of one) go: call when done reading
  // it. Values in memory are left alone.
  void release_pages(const Tensor& value) const;
  size_t size() const { return values_.size(); }
  // False when every node output was given (RecordOptions::given) and the reference did not run.
  bool reference_ran() const { return reference_ran_; }
  // With RecordOptions::partial: the reference's refusal of the first node it could not prepare
  // ("node 'g' (Gelu): unsupported operator com.microsoft.Gelu (opset 1)"), how many nodes it
  // refused and how many values are unknown because of them (0, "": it ran the whole model).
  const std::string& refusal() const { return refusal_; }
  size_t refused_nodes() const { return refused_nodes_; }
  size_t unknown_values() const { return unknown_values_; }

 private:
  // A folder this recording created, removed when the last copy of the recording goes.
  struct OwnedFolder {
    std::filesystem::path path;
    ~OwnedFolder();
  };
  class Recorder;  // one recording as it is made (recorded_values.cpp)
  RecordedValues() = default;
  std::map<std::string, Tensor, std::less<>> values_;
  uint64_t bytes_in_memory_ = 0;
  uint64_t bytes_spilled_ = 0;
  bool reference_ran_ = true;
  std::string refusal_;
  size_t refused_nodes_ = 0;
  size_t unknown_values_ = 0;
  std::shared_ptr<const MappedFile> spilled_;  // the spill file, mapped
  std::shared_ptr<OwnedFolder> spill_folder_;
  std::shared_ptr<MemoryLedger> ledger_;       // charged with bytes_in_memory_ (moves leave it null)
};

}  // namespace reduce
