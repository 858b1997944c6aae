// The options shared by every command that asks the oracle for a verdict (check, compare, reduce):
// engine specs, tolerances, same-failure refinements, timeouts and slots; and building the oracle.
#pragma once

#include <boost/program_options.hpp>

#include <filesystem>
#include <memory>
#include <stop_token>
#include <string>
#include <variant>

#include "core/model.h"
#include "oracle/oracle.h"

namespace reduce::cli {

// Limits of the options (documented in README.md): -j, --slots and --threads at most kMaxParallel
// (each slot and thread has a cost; oneTBB fails far above it), --timeout at most one week (a
// longer one overflows the clock's deadline; 0 means no limit).
inline constexpr int kMaxParallel = 1024;
inline constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600;
// Every engine run, in-process or external, ends as `timeout` after this long unless --timeout
// says otherwise (an engine that hangs must not hang the tool).
inline constexpr double kDefaultTimeoutSeconds = 3600;

// Checks that an integer option lies in [lo, hi]; the error names the option.
Status check_int_range(const char* option, int value, int lo, int hi);

void add_oracle_options(boost::program_options::options_description& opts);

// --timeout and --max-memory: the budget of every engine run (also `reduce run`'s).
void add_run_limit_options(boost::program_options::options_description& opts);
// Reads them into `environment`; errors name the option.
Status run_limits_from(const boost::program_options::variables_map& vm, EngineEnvironment& environment);

// The FP32 nodes of an engine spec (`opt:fp16,fp32=...`, `cmd[fp32=...]:`) must all be nodes of the
// model the command was given: the first that is not is an error naming it (and its file).
Status check_fp32_nodes_of(const std::string& spec, const Model& model, const std::string& model_path);

Expected<OracleOptions> oracle_options_from(const boost::program_options::variables_map& vm);

// Loads the model (with --input-shape applied), prepares inputs and creates the oracle. The model
// is stored in `model` (which must outlive the oracle). Errors are one line. When `stop` is
// requested after loading, the reference does not run (an error; the caller reports the stop).
Expected<std::unique_ptr<Oracle>> load_and_create_oracle(const boost::program_options::variables_map& vm,
                                                         const std::filesystem::path& model_path, Model& model,
                                                         std::stop_token stop = {});

// The opening of `check` and `compare`: load_and_create_oracle, then the header on stdout. Either
// the oracle, or the exit code after saying why on stderr (2 bad input, 130 interrupted).
std::variant<std::unique_ptr<Oracle>, int> open_oracle(const boost::program_options::variables_map& vm,
                                                       const std::string& model_path, Model& model,
                                                       std::stop_token stop);

}  // namespace reduce::cli
