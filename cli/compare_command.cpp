// `reduce compare MODEL --engine SPEC`: per-output error statistics, then every intermediate value
// compared with the reference (layerwise table, accumulated error) next to each node run alone on
// its reference inputs (local error): where error is born; optionally the chart of both.
#include <boost/program_options.hpp>

#include <iostream>

#include "command.h"
#include "command_line.h"
#include "input_options.h"
#include "oracle_options.h"
#include "oracle/error_origin.h"
#include "session/error_chart.h"
#include "session/error_origin_report.h"
#include "session/verdict_report.h"
#include "stop_on_signal.h"

namespace reduce::cli {

namespace po = boost::program_options;

namespace {

// Each node run alone is one engine run: the bound keeps huge models (and cmd: engines) in reach.
constexpr int kMaxLocalRuns = 1000000;

po::options_description compare_options() {
  po::options_description opts(
      "usage: reduce compare MODEL --engine SPEC [options]\n\n"
      "Compares the engine under test with the reference on every output (error statistics), then on\n"
      "every intermediate value (a layerwise table, with the first diverging node): the accumulated\n"
      "error. Next to it, each node runs alone on its recorded reference inputs (local error): a node\n"
      "that fails alone adds error, one that does not only inherits it. Requesting intermediate values\n"
      "can change what an engine fuses; when that makes the failure disappear, the layerwise table\n"
      "cannot be trusted and compare says so.\n"
      "Exit code: 0 the outputs agree, 1 they do not, 2 bad usage or input.\n\noptions");
  opts.add_options()("help,h", "show this help")("model", po::value<std::string>(), "the model (.onnx or .onnxtxt)")
      ("all-layers", "print every value, not only the failing ones and the first few")
      ("chart", po::value<std::string>(),
       "write an SVG chart (gnuplot): error per node, local vs accumulated, and the output values")
      ("local-runs", po::value<int>()->default_value(2000),
       "at most this many nodes run alone (the ones whose error grows the most first; 0: none)")
      ("jobs,j", po::value<int>()->default_value(0), "nodes run alone at once (0: --slots, else the number of cores)");
  add_oracle_options(opts);
  add_input_options(opts);
  return opts;
}

}  // namespace

int compare_command(const std::vector<std::string>& args, std::stop_token stop) {
  const po::options_description opts = compare_options();
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (auto done = parse_command_line(args, "compare", opts, pos, vm, "model", "MODEL")) return *done;
  const std::string model_path = vm["model"].as<std::string>();
  const std::string chart = vm.count("chart") ? vm["chart"].as<std::string>() : "";
  Status usable = check_int_range("--local-runs", vm["local-runs"].as<int>(), 0, kMaxLocalRuns);
  if (usable.ok() && !chart.empty()) usable = check_chart_path(chart);
  if (!usable.ok()) {
    std::cerr << "error: " << usable.error().message() << "\n";
    return kExitUsage;
  }
  const CancelOnStop cancel(stop);
  Model model;
  auto opened = open_oracle(vm, model_path, model, SampleUse::FirstFailing, stop);
  if (const int* code = std::get_if<int>(&opened)) return *code;
  Oracle& o = std::get<SampleOracles>(opened).main();
  std::cout << "\n## outputs\n\n";
  TensorMap actual;
  Verdict verdict = o.evaluate(Candidate::whole(model.graph), cancel.flag(), &actual);
  if (verdict.cancelled) return interrupted();
  print_verdict(verdict, std::cout);
  if (verdict.invalid) return kExitUsage;
  const int exit_code = verdict.signature.fails() ? kExitFailure : kExitOk;

  auto layers = o.compare_layers(cancel.flag());
  if (cancel.requested()) return interrupted();
  std::cout << "\n## layers (accumulated: every value requested as an output; local: each node alone on its "
               "reference inputs)\n\n";
  if (!layers) {
    std::cout << "layerwise run failed: " << layers.error().message() << "\n";
    return exit_code;
  }
  ErrorOriginOptions eo;
  eo.max_local_runs = static_cast<size_t>(vm["local-runs"].as<int>());
  eo.jobs = o.options().slots;
  const ErrorOrigin origin = trace_error_origin(o, *layers, eo, cancel.flag());
  if (cancel.requested()) return interrupted();
  print_error_table(origin, model.graph, vm.count("all-layers") > 0, std::cout);
  std::cout << "\n";
  print_error_findings(origin, model.graph, std::cout);
  if (verdict.signature.fails() && !origin.worst_output)
    std::cout << "warning: the failure disappears when intermediate values are requested as outputs (the engine "
                 "fuses differently, e.g. a fused kernel is split): this failure is fusion-dependent and the "
                 "layerwise table cannot be trusted to locate it\n";
  if (chart.empty()) return exit_code;
  auto drawn = write_error_chart(chart, origin, model.graph, histogram_output(o, origin, actual), cancel.flag());
  if (cancel.requested()) return interrupted();
  if (!drawn) {
    std::cerr << "error: " << drawn.error().message() << "\n";
    return kExitUsage;
  }
  std::cout << (drawn->outcome == ChartOutcome::Drawn ? "chart: " + chart : drawn->note) << "\n";
  return exit_code;
}

}  // namespace reduce::cli
