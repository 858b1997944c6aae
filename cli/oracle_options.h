// The options shared by every command that asks the oracle for a verdict (check, compare, reduce):
// engine specs, tolerances, same-failure refinements, timeouts and slots; and building the oracle.
#pragma once

#include <boost/program_options.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <stop_token>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/model.h"
#include "oracle/oracle.h"
#include "oracle/samples.h"

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
// Every kind of engines.def, one per line, as a help group of its own (engine_kinds_usage).
boost::program_options::options_description engine_kinds_group();

// --timeout and --max-memory: the budget of every engine run (also `reduce run`'s).
void add_run_limit_options(boost::program_options::options_description& opts);
// Reads them into `environment`; errors name the option.
Status run_limits_from(const boost::program_options::variables_map& vm, EngineEnvironment& environment);
// --max-memory in bytes (0 when not given, or the command has no such option).
Expected<uint64_t> max_memory_from(const boost::program_options::variables_map& vm);

// The spec given to `option` (--engine, --reference), parsed: the one place the commands read a
// spec string themselves (the oracle reads its own), so that a bad one is said the same way by every
// command, before anything is loaded: `error: --engine: SPEC: PROBLEM`.
Expected<EngineSpec> engine_spec_option(const char* option, std::string_view spec);

// The FP32 nodes of an engine spec (`opt:fp16,fp32=...`, `cmd[fp32=...]:`) must all be nodes of the
// model the command was given: the first that is not is an error naming it (and its file).
Status check_fp32_nodes_of(const std::string& spec, const Model& model, const std::string& model_path);

// --engine was given, or the expected values come from elsewhere (--expected, --reference,
// --float-model); else a one-line error asking for it (a run against the reference alone shows nothing).
Status require_engine(const boost::program_options::variables_map& vm);

Expected<OracleOptions> oracle_options_from(const boost::program_options::variables_map& vm);
// -v's line for one engine run: "engine run: 12 nodes, 3.41 ms: FAIL (mismatch: ...)".
std::string engine_run_line(size_t nodes, const Verdict& verdict);

// Each sample's expected values when a command computes them itself (`precision`'s float model):
// called once the model is loaded and the samples are ready; an empty answer leaves them to
// --expected or the reference.
using ExpectedFromInputs =
    std::function<Expected<std::vector<TensorSample>>(const Model& model, const std::vector<InputSample>& samples)>;

// Loads the model (with --input-shape applied), prepares the input samples and creates the oracles
// (`use`). The model is stored in `model` (which must outlive the oracles). Errors are one line.
// When `stop` is requested, no further reference or engine run starts (an error; the caller
// reports the stop).
Expected<SampleOracles> load_and_create_oracles(const boost::program_options::variables_map& vm,
                                                const std::filesystem::path& model_path, Model& model,
                                                SampleUse use, std::stop_token stop = {},
                                                const ExpectedFromInputs& expected_from = {});

// Prints one line per sample (when there are several): its verdict, or that it was not checked.
void print_samples(const SampleOracles& samples, std::ostream& out);
// The inputs are seeded random values (no --inputs): what they can do to a failure, and what to pass instead.
bool inputs_are_random(const SampleOracles& samples);
void print_random_inputs_note(const SampleOracles& samples, std::ostream& out);

// The opening of `check`, `compare` and `precision`: load_and_create_oracles, then the header (and
// the samples) on stdout. Either the oracles, or the exit code after saying why on stderr (2 bad
// input, 130 interrupted).
std::variant<SampleOracles, int> open_oracle(const boost::program_options::variables_map& vm,
                                             const std::string& model_path, Model& model, SampleUse use,
                                             std::stop_token stop, const ExpectedFromInputs& expected_from = {});

}  // namespace reduce::cli
