// Tensors handed to and taken from engines that run elsewhere: input_K.pb in, output_K.pb/.npy out.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/model.h"
#include "engine/engine.h"

namespace reduce {

// Writes `inputs` as `input_K.pb` (each named) into `dir`, K counting the graph's runtime inputs
// in declaration order that are given. A name the graph does not take is an error.
Status write_input_folder(const std::filesystem::path& dir, const Graph& graph, const TensorMap& inputs);

// Writes `values[outputs[K]]` as `output_K.pb`, named.
Status write_output_folder(const std::filesystem::path& dir, const std::vector<std::string>& outputs,
                           const TensorMap& values);

// Reads the values `outputs` from `dir`: `output_K.pb` files (matched by their tensor name when it
// is one of `outputs`, else by position K), or `.npy` files named after the value or `output_K.npy`.
// Errors say which output is missing. `who` names the writer in messages.
Expected<TensorMap> read_output_folder(const std::filesystem::path& dir, const std::vector<std::string>& outputs,
                                       const std::string& who);

}  // namespace reduce
