// The input options shared by every command that runs a model: --inputs, --input-shape, --input-range, --seed.
#pragma once

#include <boost/program_options.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/tensor_file.h"

namespace reduce::cli {

void add_input_options(boost::program_options::options_description& opts);

// One input sample bound to the model's inputs.
struct InputSample {
  std::string source;  // the file or folder it was read from, or "seed N"
  std::vector<NamedTensor> inputs;
};

// Fixes input shapes in `model` (--input-shape), then reads every --inputs (each a sample, a folder
// of test_data_set_N folders or of .npz archives: several; read_tensor_samples) or makes one sample
// of seeded random inputs. Notes about defaulted dims go to stderr. Errors name the file.
Expected<std::vector<InputSample>> prepare_input_samples(const boost::program_options::variables_map& vm, Model& model,
                                                         const std::filesystem::path& model_path);

}  // namespace reduce::cli
