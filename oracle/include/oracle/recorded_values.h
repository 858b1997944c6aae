// RecordedValues: every value of one reference run of the full model, kept so that candidate
// subgraphs are fed exactly what their cut values were inside the original model, and compared
// with what their outputs were, without running the reference again.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.h"
#include "core/tensor_file.h"
#include "engine/engine.h"

namespace reduce {

struct RecordOptions {
  // Values above this many bytes in total are spilled to a file in `spill_dir` and memory-mapped
  // back; the reference then runs once per budget-sized group of values.
  uint64_t memory_budget = uint64_t{2} << 30;
  std::filesystem::path spill_dir;  // default: a fresh folder in the system temp folder
  // When set and it becomes true, the reference run is abandoned (an error; see RunOptions::cancel).
  const std::atomic<bool>* cancel = nullptr;
};

class RecordedValues {
 public:
  // Runs `reference` on the full model with `inputs` and records every tensor value: graph
  // inputs, initializers are not copied (the model has them), node outputs.
  static Expected<RecordedValues> record(const Model& model, Engine& reference, const std::vector<NamedTensor>& inputs,
                                         const RecordOptions& options = {});
  RecordedValues(RecordedValues&&) = default;
  RecordedValues& operator=(RecordedValues&&) = default;
  ~RecordedValues();

  // The recorded value (or the graph's initializer), or nullptr.
  const Tensor* find(std::string_view name) const;
  uint64_t bytes_in_memory() const { return bytes_in_memory_; }
  uint64_t bytes_spilled() const { return bytes_spilled_; }
  size_t size() const { return values_.size(); }

 private:
  RecordedValues() = default;
  std::map<std::string, Tensor, std::less<>> values_;
  uint64_t bytes_in_memory_ = 0;
  uint64_t bytes_spilled_ = 0;
  std::filesystem::path spill_dir_;  // removed with the object when we created it
  bool own_spill_dir_ = false;
};

}  // namespace reduce
