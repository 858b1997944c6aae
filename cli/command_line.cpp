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
  if (required && !vm.count(required)) {
    std::cerr << "error: " << command << ": missing " << required_label << " (see `reduce " << command << " --help`)\n";
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace reduce::cli
