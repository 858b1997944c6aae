// Built on the whole model as the engine under test prepared it (Oracle::prepare_whole_model):
// every value of the model compared with the recorded reference (`reduce compare`, where error is
// born, precision's first guess), and the input-binding diagnosis (does a permutation of same-typed
// inputs make the engine agree with the reference?). Neither is counted as an evaluation.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oracle/comparison.h"
#include "oracle/oracle.h"

namespace reduce {

// One value of the full model against its recorded reference; `node` produces it.
struct LayerError {
  size_t node = 0;
  std::string value;
  OutputComparison comparison;
};

// Runs the engine on the full model with every recorded value requested and compares each with
// the reference; nodes in topological order. An error for a check: script (it gives no values).
// `cancel` (when set) abandons the engine run (see RunOptions::cancel).
Expected<std::vector<LayerError>> compare_layers(Oracle& oracle, const std::atomic<bool>* cancel = nullptr);

// When the original mismatches and has several inputs of one dtype and shape: the permutation of
// those inputs (input name -> name of the tensor it should receive) under which the engine agrees
// with the reference, if any. At most `max_permutations` are tried. `cancel` (when set) ends the
// search without an answer.
std::optional<std::map<std::string, std::string>> diagnose_input_binding(Oracle& oracle,
                                                                         const std::atomic<bool>* cancel = nullptr,
                                                                         size_t max_permutations = 720);

}  // namespace reduce
