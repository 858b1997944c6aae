// Option parsing shared by the subcommands: parse, handle --help, report usage errors on one line.
#pragma once

#include <boost/program_options.hpp>

#include <functional>
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

// -q and -v, the same two options on every command: how much a command says besides its answer
// and its errors. The answer (stdout) and warnings and errors (stderr) are printed at every level.
enum class OutputLevel { quiet, normal, verbose };

// Adds the "output" group: -q (errors, warnings and the answer only) and -v with `verbose_help`
// (what this command adds). parse_command_line refuses both at once.
void add_output_options(boost::program_options::options_description& opts, const std::string& verbose_help);

// Where a command's words go, at the level its -q/-v chose. Not global: each command makes its own.
class Console {
 public:
  explicit Console(OutputLevel level = OutputLevel::normal) : level_(level) {}
  OutputLevel level() const { return level_; }
  bool quiet() const { return level_ == OutputLevel::quiet; }
  bool verbose() const { return level_ == OutputLevel::verbose; }
  // `note: TEXT` on stderr, unless quiet.
  void note(const std::string& text) const;
  // A line on stderr (progress, a command's narrative), unless quiet.
  void line(const std::string& text) const;
  // A line on stderr only with -v.
  void detail(const std::string& text) const;
  // note() as a function, for the layers below cli (an install note of an engine release).
  std::function<void(const std::string&)> note_sink() const;

 private:
  OutputLevel level_;
};

// The level -q/-v chose (normal when the command has neither option).
Console console_from(const boost::program_options::variables_map& vm);
// The same level as arguments of a command this one starts (batch's reductions): {"-q"}, {"-v"} or {}.
std::vector<std::string> output_level_arguments(const boost::program_options::variables_map& vm);

}  // namespace reduce::cli
