// What the nodes that read a model input make of it, where random values cannot be arbitrary: a
// shape or axes (no random value is one), or an index with a range the op defines.
#pragma once

#include <optional>
#include <string>

#include "core/model.h"
#include "oracle/inputs.h"

namespace reduce {

struct InputRole {
  // A reader that takes the input as a shape or as axes: random values are refused (naming it).
  std::string shape_reader;  // "Reshape 'r' reads it as its shape"; empty when none
  // An index: the values every index reader accepts, [0, n-1] of the smallest n known.
  std::optional<ValueRange> index_range;
  std::string index_reader;  // "Gather 'g' indexes axis 0 of size 4 with it"
};

InputRole input_role(const Graph& graph, const std::string& input);

}  // namespace reduce
