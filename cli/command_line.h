// Option parsing shared by the subcommands: parse, handle --help, report usage errors on one line.
#pragma once

#include <boost/program_options.hpp>

#include <optional>
#include <string>
#include <vector>

namespace reduce::cli {

// Parses `args` into `vm`. Returns an exit code when the command is done (help printed: 0; a usage
// error printed as `error: <command>: <problem>`: 2), or nullopt when the command should run.
// `required` names a positional option that must be present (printed as `missing <label>`).
std::optional<int> parse_command_line(const std::vector<std::string>& args, const std::string& command,
                                      const boost::program_options::options_description& opts,
                                      const boost::program_options::positional_options_description& positional,
                                      boost::program_options::variables_map& vm, const char* required = nullptr,
                                      const char* required_label = nullptr);

}  // namespace reduce::cli
