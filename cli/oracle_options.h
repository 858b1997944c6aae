// The options shared by every command that asks the oracle for a verdict (check, compare, reduce):
// engine specs, tolerances, same-failure refinements, timeouts and slots; and building the oracle.
#pragma once

#include <boost/program_options.hpp>

#include <filesystem>
#include <memory>
#include <stop_token>

#include "core/model.h"
#include "oracle/oracle.h"

namespace reduce::cli {

void add_oracle_options(boost::program_options::options_description& opts);

Expected<OracleOptions> oracle_options_from(const boost::program_options::variables_map& vm);

// Loads the model (with --input-shape applied), prepares inputs and creates the oracle. The model
// is stored in `model` (which must outlive the oracle). Errors are one line. When `stop` is
// requested after loading, the reference does not run (an error; the caller reports the stop).
Expected<std::unique_ptr<Oracle>> load_and_create_oracle(const boost::program_options::variables_map& vm,
                                                         const std::filesystem::path& model_path, Model& model,
                                                         std::stop_token stop = {});

}  // namespace reduce::cli
