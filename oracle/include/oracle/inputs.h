// Seeded random inputs for a model, with documented per-dtype distributions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/tensor_file.h"

namespace reduce {

struct ValueRange {
  double lo = 0;
  double hi = 0;
};

struct RandomInputOptions {
  uint64_t seed = 0;
  // Per-input value ranges (`--input-range NAME:LO,HI`). Defaults: floating types uniform in
  // [-1, 1); integer types uniform integers in [0, 9], narrowed to [0, n-1] for an input a node
  // reads as indices into an axis of static size n (Gather, GatherElements, ScatterElements,
  // RoiAlign's batch indices); bool true with probability 1/2. An integer input a node reads as a
  // shape or axes (Reshape, Expand, ...), and an input that declares no shape, are refused.
  std::map<std::string, ValueRange, std::less<>> ranges;
};

// One tensor per runtime input (declared inputs without an initializer), in declaration order.
// Dynamic dims must be fixed first (set_input_shape); any left are taken as 1 and listed in `notes`.
// Each input's values depend only on the seed and the input's name, not on the other inputs.
Expected<std::vector<NamedTensor>> make_random_inputs(const Graph& graph, const RandomInputOptions& options,
                                                      std::vector<std::string>* notes = nullptr);

}  // namespace reduce
