// Option parsing shared by the subcommands.
#include "command_line.h"

#include <iostream>

#include "command.h"
#include "core/spelling.h"

namespace reduce::cli {

namespace po = boost::program_options;

std::optional<int> parse_command_line(const std::vector<std::string>& args, const std::string& command,
                                      const po::options_description& opts,
                                      const po::positional_options_description& positional, po::variables_map& vm,
                                      const char* required, const char* required_label) {
  try {
    po::store(po::command_line_parser(args).options(opts).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    // The nearest option of this command: `--enigne` -> `--engine`.
    std::vector<std::string> known;
    for (const auto& o : opts.options())
      if (!o->long_name().empty()) known.push_back(o->long_name());
    std::string name = e.get_option_name();
    name.erase(0, name.find_first_not_of('-'));
    std::cerr << "error: " << command << ": " << e.what() << did_you_mean(name, known, "--") << " (see `reduce help "
              << command << "`)\n";
    return kExitUsage;
  } catch (const po::error& e) {
    std::cerr << "error: " << command << ": " << e.what() << "\n";
    return kExitUsage;
  }
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return kExitOk;
  }
  if (vm.count("quiet") && vm.count("verbose")) {
    std::cerr << "error: " << command << ": -q (--quiet) and -v (--verbose) cannot be given together\n";
    return kExitUsage;
  }
  if (required && !vm.count(required)) {
    std::cerr << "error: " << command << ": missing " << required_label << " (see `reduce " << command << " --help`)\n";
    return kExitUsage;
  }
  return std::nullopt;
}

void add_output_options(po::options_description& opts, const std::string& verbose_help) {
  po::options_description output("output (stdout carries the answer; notes, progress and errors go to stderr)");
  output.add_options()("quiet,q", "say nothing but the answer, warnings and errors (no notes, no progress)")
      ("verbose,v", verbose_help.c_str());
  opts.add(output);
}

void Console::note(const std::string& text) const {
  if (!quiet()) print_stderr_line("note: " + text);
}

void Console::line(const std::string& text) const {
  if (!quiet()) print_stderr_line(text);
}

void Console::detail(const std::string& text) const {
  if (verbose()) print_stderr_line(text);
}

std::function<void(const std::string&)> Console::note_sink() const {
  return [console = *this](const std::string& text) { console.note(text); };
}

std::vector<std::string> output_level_arguments(const po::variables_map& vm) {
  switch (console_from(vm).level()) {
    case OutputLevel::quiet: return {"-q"};
    case OutputLevel::verbose: return {"-v"};
    case OutputLevel::normal: break;
  }
  return {};
}

Console console_from(const po::variables_map& vm) {
  if (vm.count("quiet")) return Console(OutputLevel::quiet);
  if (vm.count("verbose")) return Console(OutputLevel::verbose);
  return Console(OutputLevel::normal);
}

}  // namespace reduce::cli
