// Option parsing shared by the subcommands.
#include "command_line.h"

#include <iostream>

#include "command.h"

namespace reduce::cli {

namespace po = boost::program_options;

std::optional<int> parse_command_line(const std::vector<std::string>& args, const std::string& command,
                                      const po::options_description& opts,
                                      const po::positional_options_description& positional, po::variables_map& vm,
                                      const char* required, const char* required_label) {
  try {
    po::store(po::command_line_parser(args).options(opts).positional(positional).run(), vm);
    po::notify(vm);
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
