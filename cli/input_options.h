// The input options shared by every command that runs a model: --inputs, --input-shape, --input-range, --seed.
#pragma once

#include <boost/program_options.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/tensor_file.h"
#include "core/tensor_set.h"
#include "oracle/samples.h"

namespace reduce::cli {

void add_input_options(boost::program_options::options_description& opts);

// Fixes input shapes in `model` (--input-shape), then reads every --inputs (each a sample, a folder
// of test_data_set_N folders or of .npz archives: several; read_tensor_samples) or makes one sample
// of seeded random inputs. Notes about defaulted dims go to stderr. Errors name the file.
Expected<std::vector<InputSample>> prepare_input_samples(const boost::program_options::variables_map& vm, Model& model,
                                                         const std::filesystem::path& model_path);

// --expected: reference values from files (Polygraphy --save-outputs JSON, .npz, .npy, .pb, or
// folders of test_data_set_N with output_K.pb), one sample per input sample, in the same order,
// bound to the values the model computes (bind_expected). Empty when the option is absent. They
// belong to given inputs: without --inputs, or with another number of samples, it is an error.
Expected<std::vector<TensorSample>> read_expected_samples(const boost::program_options::variables_map& vm,
                                                                     const Model& model, size_t input_samples);

}  // namespace reduce::cli
