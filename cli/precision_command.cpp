// `reduce precision MODEL --engine SPEC`: the smallest set of nodes to keep in FP32 so that the
// model passes (session/precision.h); prints it with TensorRT and Polygraphy flags, writes a bundle.
#include <boost/program_options.hpp>

#include <algorithm>
#include <iostream>

#include "command.h"
#include "command_line.h"
#include "input_options.h"
#include "oracle_options.h"
#include "session/bundle.h"
#include "session/precision.h"
#include "session/verdict_report.h"
#include "stop_on_signal.h"

namespace reduce::cli {

namespace po = boost::program_options;

namespace {

constexpr int kMaxLocalRuns = 1000000;

// The command line again, each argument a shell word (for the report's "reproduce" line).
std::string command_line(const std::vector<std::string>& args) {
  std::string s = "reduce precision";
  for (const auto& a : args) {
    const bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`!*?[](){};<>|&#~") == std::string::npos;
    if (plain) {
      s += " " + a;
      continue;
    }
    s += " '";
    for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
    s += "'";
  }
  return s;
}

po::options_description precision_options() {
  po::options_description opts(
      "usage: reduce precision MODEL --engine SPEC [options]\n\n"
      "Finds a smallest set of nodes to keep in FP32 so that MODEL passes on an engine that runs in\n"
      "reduced precision (opt:fp16, opt:bf16, or a cmd:/check: template using {fp32_nodes} or\n"
      "{fp32_nodes_file}): first checks that the model fails as it is and passes with every float\n"
      "node in FP32, then searches (nodes that add the most error alone first) for a 1-minimal set:\n"
      "without any one of its nodes the model fails again. Same set for every -j.\n"
      "Exit code: 0 found, 2 bad usage or input, 3 the model does not fail, 4 it fails even with every\n"
      "float node in FP32 (not a precision problem), 130 interrupted (the best set so far is kept).\n\noptions");
  opts.add_options()("help,h", "show this help")("model", po::value<std::string>(), "the model (.onnx or .onnxtxt)")
      ("output,o", po::value<std::string>(), "bundle folder: precision.txt, report.md, report.json")
      ("jobs,j", po::value<int>()->default_value(1), "sets checked at once")
      ("local-runs", po::value<int>()->default_value(2000),
       "at most this many nodes run alone to rank them by the error they add (0: none)")
      ("strategy", po::value<std::string>()->default_value("default"),
       "default (1-minimal set), or a baseline as Polygraphy's `debug precision`: polygraphy-bisect or\n"
       "polygraphy-linear (the first K float nodes in FP32, K searched)")
      ("direction", po::value<std::string>()->default_value("forward"),
       "for the baselines: forward (K nodes from the inputs) or reverse (from the outputs)");
  add_oracle_options(opts);
  add_input_options(opts);
  return opts;
}

// The set found, one node per line, with the flags that keep it in FP32 on TensorRT and Polygraphy.
void print_fp32_set(const PrecisionOutcome& out) {
  std::cout << "\n" << out.pinned.size() << " of " << out.candidates << " float nodes in FP32"
            << (out.one_minimal ? " (1-minimal)" : "") << (out.strategy != "default" ? " (" + out.strategy + ")" : "")
            << ", " << out.checks << " sets checked:\n";
  for (const auto& p : out.pinned) std::cout << "  " << p.name << " (" << p.op_type << ")\n";
  std::cout << "\nTensorRT:   " << tensorrt_flags(out.pinned) << "\nPolygraphy: " << polygraphy_flags(out.pinned) << "\n";
}

}  // namespace

int precision_command(const std::vector<std::string>& args, std::stop_token stop) {
  const po::options_description opts = precision_options();
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (auto done = parse_command_line(args, "precision", opts, pos, vm, "model", "MODEL")) return *done;
  const std::string model_path = vm["model"].as<std::string>();
  Status usable = check_int_range("-j", vm["jobs"].as<int>(), 1, kMaxParallel);
  if (usable.ok()) usable = check_int_range("--local-runs", vm["local-runs"].as<int>(), 0, kMaxLocalRuns);
  const std::string strategy = vm["strategy"].as<std::string>(), direction = vm["direction"].as<std::string>();
  if (usable.ok() && std::find(std::begin(kPrecisionStrategies), std::end(kPrecisionStrategies), strategy) ==
                         std::end(kPrecisionStrategies))
    usable = Error{"--strategy", "must be default, polygraphy-bisect or polygraphy-linear, not '" + strategy + "'"};
  if (usable.ok() && direction != "forward" && direction != "reverse")
    usable = Error{"--direction", "must be forward or reverse, not '" + direction + "'"};
  const std::string out_dir = vm.count("output") ? vm["output"].as<std::string>() : "";
  if (usable.ok() && !out_dir.empty()) usable = check_bundle_folder(out_dir, model_path, false);
  if (!usable.ok()) {
    std::cerr << "error: " << usable.error().message() << "\n";
    return kExitUsage;
  }
  Model model;
  auto opened = open_oracle(vm, model_path, model, stop);
  if (const int* code = std::get_if<int>(&opened)) return *code;
  Oracle& oracle = *std::get<std::unique_ptr<Oracle>>(opened);
  // A set names nodes: unnamed ones get names (the bundle's reports use them).
  if (const size_t named = name_unnamed_nodes(model))
    std::cout << "named " << named << " unnamed nodes node_K (engines see these names)\n";

  PrecisionOptions po_;
  po_.jobs = vm["jobs"].as<int>();
  po_.max_local_runs = static_cast<size_t>(vm["local-runs"].as<int>());
  po_.strategy = strategy;
  po_.from_outputs = direction == "reverse";
  po_.log = [](const std::string& line) { std::cout << line << "\n" << std::flush; };
  auto found = find_fp32_nodes(oracle, po_, stop);
  if (!found) {
    std::cerr << "error: " << model_path << ": " << found.error().message() << "\n";
    return kExitUsage;
  }
  const PrecisionOutcome& out = *found;
  if (out.stopped && out.pinned.empty()) return interrupted("; nothing written");
  if (out.kind == PrecisionOutcome::Kind::DoesNotFail) {
    std::cout << "does not fail: the model passes with nothing in FP32\n";
    return kExitDoesNotFail;
  }
  if (out.kind == PrecisionOutcome::Kind::FailsEvenInFp32) {
    std::cout << "fails even in FP32: not a precision problem (" << out.after.signature.to_string() << ")\n";
    return kExitNotPrecision;
  }
  print_fp32_set(out);
  if (!out_dir.empty()) {
    if (Status st = write_precision_bundle(out_dir, oracle, out, command_line(args)); !st.ok()) {
      std::cerr << "error: " << st.error().message() << "\n";
      return kExitUsage;
    }
    std::cout << "bundle: " << out_dir << " (precision.txt, model.onnx, report.md, report.json)\n";
  }
  if (out.stopped) return interrupted("; the best set so far is kept");
  return kExitOk;
}

}  // namespace reduce::cli
