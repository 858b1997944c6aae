// The input options shared by every command that runs a model: --inputs, --input-shape, --input-range, --seed.
#pragma once

#include <boost/program_options.hpp>

#include <filesystem>
#include <vector>

#include "core/model.h"
#include "core/tensor_file.h"

namespace reduce::cli {

void add_input_options(boost::program_options::options_description& opts);

// Fixes input shapes in `model` (--input-shape), then reads --inputs or makes seeded random inputs.
// Notes about defaulted dims go to stderr.
Expected<std::vector<NamedTensor>> prepare_inputs(const boost::program_options::variables_map& vm, Model& model,
                                                  const std::filesystem::path& model_path);

}  // namespace reduce::cli
