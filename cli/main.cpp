// Entry point of `reduce`: dispatches to subcommands and turns uncaught problems into exit code 2.
#include <signal.h>

#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "adapters/library_settings.h"
#include "command.h"
#include "core/spelling.h"
#include "core/version.h"
#include "engine/engine.h"
#include "reducer/parallelism.h"
#include "stop_on_signal.h"

namespace {

using Args = std::vector<std::string>;

// Ctrl-C during start-up: the libraries' static initialization takes most of the time before
// `main` (about a second under the sanitizers), and a signal then would kill the process with no
// word. SIGINT, SIGTERM, SIGHUP and SIGPIPE are blocked from the first code that runs after the dynamic loader
// (.preinit_array runs before any library's initializers), so such a signal stays pending and
// StopOnSignal turns it into a clean stop ("interrupted; nothing written"). Commands that do not
// stop cleanly unblock them again.
void block_stop_signals(int, char**, char**) {
  const sigset_t signals = reduce::cli::stop_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
}
[[gnu::section(".preinit_array"), gnu::used]] void (*const kBlockStopSignalsAtStart)(int, char**, char**) =
    block_stop_signals;

// A subcommand runs to its end (`run`), or runs engines or reductions that Ctrl-C stops cleanly
// (`stoppable`: its engines are killed, it exits 130).
struct Subcommand {
  const char* name;
  int (*run)(const Args&);
  int (*stoppable)(const Args&, std::stop_token);
  const char* help;
};

const Subcommand kSubcommands[] = {
    {"info", reduce::cli::info_command, nullptr, "print a model's opsets, op histogram, inputs, outputs and weights"},
    {"convert", reduce::cli::convert_command, nullptr, "convert a model to FP16 or BF16 at the ONNX level, nodes kept in FP32"},
    {"run", nullptr, reduce::cli::run_command, "run a model on an engine; print and save its outputs"},
    {"conformance", reduce::cli::conformance_command, nullptr, "run ONNX backend test folders on the reference engine"},
    {"check", nullptr, reduce::cli::check_command, "does the model fail on an engine? print the verdict and failure signature"},
    {"batch", nullptr, reduce::cli::batch_command, "reduce every model of a folder or manifest; bucket the reproducers"},
    {"precision", nullptr, reduce::cli::precision_command, "find a smallest set of nodes to keep in FP32 so that the model passes"},
    {"compare", nullptr, reduce::cli::compare_command, "per-output and layerwise errors of an engine against the reference"},
};

// Uncaught problems become exit code 2.
template <typename F>
int guarded(F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return reduce::cli::kExitUsage;
  }
}

// Signals become a stop request (installed once, here, before the command loads anything or starts
// any thread).
int run_stoppable(int (*command)(const Args&, std::stop_token), const Args& args) {
  reduce::cli::StopOnSignal stop;
  return guarded([&] { return command(args, stop.token()); });
}

void print_usage(std::ostream& out) {
  out << "usage: reduce <command> [options]\n\n"
         "reduce shrinks an ONNX model on which an inference engine fails to the smallest model\n"
         "that still shows the same failure.\n\ncommands:\n";
  for (const auto& s : kSubcommands) out << "  " << s.name << std::string(12 - std::strlen(s.name), ' ') << s.help << "\n";
  out << "\n`reduce MODEL.onnx --engine SPEC [options]` reduces MODEL (see `reduce MODEL.onnx --help`).\n"
         "`reduce <command> --help` describes a command's options; `reduce --version` the release.\n"
         "Exit codes: 0 ok, 1 the model fails (check, compare), 2 bad usage or invalid input,\n"
         "3 the model to reduce does not fail, 4 `precision`: fails even in FP32, 5 an MPI worker rank lost rank 0,\n"
         "6 the reproducer did not fail again on every fresh run (--confirm), 7 the engine fails the same way on a\n"
         "one-node model (a setup problem, not this model's), 8 the exact FP16/BF16 reference fails the same way on the\n"
         "reproducer (rounding, not an engine bug), 130 interrupted (Ctrl-C, SIGTERM, SIGHUP, SIGPIPE).\n";
}

// reduce's release, the compiler, and the libraries it was built with (the first lines of a bug report).
void print_version(std::ostream& out) {
  out << "reduce " << reduce::kReduceVersion << "\nbuilt with g++ " << __VERSION__ << "\n";
  for (const auto& [name, version] : reduce::core_library_versions()) out << name << " " << version << "\n";
  for (const auto& [name, version] : reduce::engine_library_versions()) out << name << " " << version << "\n";
}

// A command that is not stoppable ends at Ctrl-C the default way.
int unstoppable(int (*command)(const Args&), const Args& args) {
  reduce::cli::unblock_stop_signals();
  return guarded([&] { return command(args); });
}

}  // namespace

int main(int argc, char** argv) {
  reduce::tune_allocator_for_engines();  // process-wide: here, once, never in a library
  // -j checks in flight beyond the cores (times the ranks of an MPI job); arenas ask only for what they use.
  const reduce::CheckParallelism parallelism(1 << 16);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_usage(std::cerr);
    return reduce::cli::kExitUsage;
  }
  // `reduce help CMD` is `reduce CMD --help`; `reduce help` alone, the usage.
  if ((args[0] == "help" || args[0] == "--help" || args[0] == "-h") && args.size() > 1 && args[1].rfind("-", 0) != 0)
    args = args[1] == "reduce" ? Args{"--help"} : Args{args[1], "--help"};  // `reduce --help` below is the usage
  else if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(std::cout);
    return reduce::cli::kExitOk;
  }
  if (args[0] == "--version" || args[0] == "version") {
    print_version(std::cout);
    return reduce::cli::kExitOk;
  }
  // Not listed in the usage: isolated engines start it (with the parent's signal mask).
  if (args[0] == "__worker") {
    reduce::cli::unblock_stop_signals();
    return reduce::cli::worker_command({args.begin() + 1, args.end()});
  }
  // `reduce MODEL.onnx ...` is the reduce command itself.
  const auto ends_with = [](const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  // So is `reduce --print-passes` or `reduce -j 4 MODEL.onnx`: options before the model.
  if (ends_with(args[0], ".onnx") || ends_with(args[0], ".onnxtxt") || args[0].rfind("-", 0) == 0)
    return run_stoppable(reduce::cli::reduce_command, args);
  for (const auto& s : kSubcommands) {
    if (args[0] != s.name) continue;
    const Args rest(args.begin() + 1, args.end());
    return s.stoppable ? run_stoppable(s.stoppable, rest) : unstoppable(s.run, rest);
  }
  std::vector<std::string> known = {"help", "version"};
  for (const auto& s : kSubcommands) known.emplace_back(s.name);
  std::cerr << "error: unknown command '" << args[0] << "'" << reduce::did_you_mean(args[0], known)
            << " (see `reduce --help`)\n";
  return reduce::cli::kExitUsage;
}
