// The options of `reduce MODEL.onnx --engine SPEC [options]`, parsed into a session's options.
// `reduce MODEL` and `reduce batch` (for each model) both parse with it.
#pragma once

#include <boost/program_options.hpp>

#include <stop_token>
#include <string>
#include <variant>
#include <vector>

#include "session/control_flow.h"
#include "session/session.h"

namespace reduce::cli {

// Unrolling never adds more nodes than this, whatever --max-unrolled-nodes says.
inline constexpr uint64_t kMaxUnrolledNodes = 10000000;

struct ReduceArguments {
  boost::program_options::variables_map vm;  // also holds the oracle and input options
  SessionOptions session;
  FlattenOptions flatten;  // control flow before the search
  double rank_timeout = 30;  // MPI: seconds a silent worker rank is kept (cluster/mpi_job.h)
};

// The parsed arguments, or the exit code when the command is done (help, --print-passes, usage
// error printed on one line). args[0] is the model.
std::variant<ReduceArguments, int> parse_reduce_arguments(const std::vector<std::string>& args);

// The same options, only parsed (no folder or search settings checked): what the checks of a release
// scan take from --reduce-option (tolerances, --reference, --timeout, --fail-regex). Or the exit code.
std::variant<boost::program_options::variables_map, int> parse_reduce_options(const std::vector<std::string>& args);
// The options the user gave in `vm` (not left at their defaults) that `reduce MODEL` takes too,
// but those named in `skip`, as shell words (" --inputs 'a b' --atol 1e-06"): a printed `reduce`
// command keeps what decided the verdict (--inputs, --expected, tolerances, --fail-regex, ...).
std::string reduce_options_given(const boost::program_options::variables_map& vm, const std::vector<std::string>& skip);

}  // namespace reduce::cli
