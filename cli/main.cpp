// Entry point of `reduce`: dispatches to subcommands and turns uncaught problems into exit code 2.
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"

namespace {

struct Subcommand {
  const char* name;
  int (*run)(const std::vector<std::string>&);
  const char* help;
};

const Subcommand kSubcommands[] = {
    {"info", reduce::cli::info_command, "print a model's opsets, op histogram, inputs, outputs and weights"},
    {"run", reduce::cli::run_command, "run a model on an engine; print and save its outputs"},
    {"conformance", reduce::cli::conformance_command, "run ONNX backend test folders on the reference engine"},
    {"check", reduce::cli::check_command, "does the model fail on an engine? print the verdict and failure signature"},
    {"compare", reduce::cli::compare_command, "per-output and layerwise errors of an engine against the reference"},
};

void print_usage(std::ostream& out) {
  out << "usage: reduce <command> [options]\n\n"
         "reduce shrinks an ONNX model on which an inference engine fails to the smallest model\n"
         "that still shows the same failure.\n\ncommands:\n";
  for (const auto& s : kSubcommands) out << "  " << s.name << std::string(12 - std::strlen(s.name), ' ') << s.help << "\n";
  out << "\n`reduce MODEL.onnx --engine SPEC [options]` reduces MODEL (see `reduce MODEL.onnx --help`).\n"
         "`reduce <command> --help` describes a command's options.\n"
         "Exit codes: 0 ok, 1 the model fails (check, compare), 2 bad usage or invalid input,\n"
         "3 the model to reduce does not fail.\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_usage(std::cerr);
    return reduce::cli::kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(std::cout);
    return reduce::cli::kExitOk;
  }
  // `reduce MODEL.onnx ...` is the reduce command itself.
  const auto ends_with = [](const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(args[0], ".onnx") || ends_with(args[0], ".onnxtxt")) {
    try {
      return reduce::cli::reduce_command(args);
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << "\n";
      return reduce::cli::kExitUsage;
    }
  }
  for (const auto& s : kSubcommands) {
    if (args[0] == s.name) {
      try {
        return s.run({args.begin() + 1, args.end()});
      } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        return reduce::cli::kExitUsage;
      }
    }
  }
  std::cerr << "error: unknown command '" << args[0] << "' (see `reduce --help`)\n";
  return reduce::cli::kExitUsage;
}
