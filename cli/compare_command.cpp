// `reduce compare MODEL --engine SPEC`: per-output error statistics, then every intermediate value
// compared with the reference (layerwise table, accumulated error) next to each node run alone on
// its reference inputs (local error): where error is born; optionally the chart of both.
#include <boost/program_options.hpp>

#include <iostream>
#include <optional>

#include "command.h"
#include "command_line.h"
#include "float_model_option.h"
#include "input_options.h"
#include "adapters/engine_spec.h"
#include "oracle_options.h"
#include "oracle/error_origin.h"
#include "core/bundle_lock.h"
#include "oracle/error_chart.h"
#include "oracle/error_origin_report.h"
#include "oracle/verdict_report.h"
#include "core/progress_estimate.h"
#include "json_output.h"
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
      "With --float-model (MODEL quantized with QuantizeLinear/DequantizeLinear): the outputs are compared\n"
      "with the float model's, and the layers say the error each quantized node adds (alone, its quantized\n"
      "inputs made from the float model's values, against the float node) and what it inherits.\n"
      "Exit code: 0 the outputs agree, 1 they do not, 2 bad usage or input.\n\noptions");
  opts.add_options()("help,h", "show this help")("model", po::value<std::string>(), "the model (.onnx or .onnxtxt)")
      ("all-layers", "print every value, not only the failing ones and the first few")
      ("chart", po::value<std::string>(),
       "FILE.svg or FILE.png: a chart (gnuplot) of the error per node, local vs accumulated, and the output values")
      ("json", "print one JSON document on stdout instead of text: schema, command, model, engine, reference, "
               "verdict, layers (per value: accumulated and local error over the tolerance; the findings), exit_code")
      ("local-runs", po::value<int>()->default_value(2000),
       "at most this many nodes run alone (the ones whose error grows the most first; 0: none)")
      ("jobs,j", po::value<int>()->default_value(0), "nodes run alone at once (0: --slots, else the number of cores)")
      ("float-model", po::value<std::string>(),
       "MODEL is quantized (Q/DQ) and this is its float model (nodes and weights matched by name): compare with it");
  add_oracle_options(opts);
  add_input_options(opts);
  add_output_options(opts, "one line per engine run (nodes, time, verdict) on stderr, the nodes run alone included");
  return opts;
}

// The error each quantized node adds and what it inherits, on the reference (the quantized model's
// own error against the float model, whatever the engine); the chart of both. 0 when done, else
// the exit code.
int quantization_layers(Oracle& o, const QuantizedSearchPlan& plan, bool all, const std::string& chart, const CancelOnStop& cancel,
                        JsonOutput& json) {
  std::cout << "\n## quantized nodes (added: the node alone, its quantized inputs made from the float model's values, "
               "against the float node; accumulated: the quantized model against the float model; both on the reference)\n\n";
  auto reference = make_engine(o.reference_spec(), o.options().environment);
  if (!reference) {
    std::cerr << "error: " << reference.error().message() << "\n";
    return kExitUsage;
  }
  auto errors = quantization_errors(o.model(), plan, **reference, o.inputs(), o.options().tolerance, true, cancel.flag());
  if (cancel.requested()) return interrupted();
  if (!errors) {
    std::cout << "quantization errors could not be computed: " << errors.error().message() << "\n";
    return 0;
  }
  const ErrorOrigin origin = quantization_origin(*errors);
  json.doc()["layers"] = origin_json(origin, o.model().graph);
  print_error_table(origin, o.model().graph, all, std::cout);
  size_t inherit = 0;
  for (const auto& v : origin.values) inherit += !v.accumulated.passed && !adds_error(v);
  std::cout << "\n";
  if (origin.top_local.empty()) {
    std::cout << "no quantized node adds error beyond the tolerance alone: the error accumulates\n";
  } else {
    std::cout << "adds the most error when quantized alone:";
    for (size_t k = 0; k < origin.top_local.size() && k < 5; ++k)
      std::cout << (k ? "; " : " ") << describe_node(o.model().graph, origin.values[origin.top_local[k]]) << " "
                << format_number(error_score(*origin.values[origin.top_local[k]].local)) << " x tolerance";
    std::cout << "\n";
  }
  std::cout << origin.top_local.size() << " of " << plan.nodes.size() << " quantized nodes add error beyond the tolerance; "
            << inherit << " values beyond it only inherit it\n";
  if (chart.empty()) return 0;
  auto drawn = write_error_chart({chart}, origin, o.model().graph, std::nullopt, cancel.flag());
  if (cancel.requested()) return interrupted();
  if (!drawn) {
    std::cerr << "error: " << drawn.error().message() << "\n";
    return kExitUsage;
  }
  std::cout << (drawn->outcome == ChartOutcome::Drawn ? "chart: " + chart : drawn->note) << "\n";
  return 0;
}

// The chart's guards (core/bundle_lock.h): it never replaces a model, and one command at a time
// writes it. Nothing to claim without --chart.
Status claim_chart(const po::variables_map& vm, const std::string& chart, std::optional<BundleLock>& lock) {
  if (chart.empty()) return {};
  const std::string model = vm["model"].as<std::string>();
  const std::string float_model = vm.count("float-model") ? vm["float-model"].as<std::string>() : "";
  REDUCE_ASSIGN(BundleLock claimed, claim_output(chart, OutputKind::File, {model, float_model}, "--chart"));
  lock.emplace(std::move(claimed));
  return {};
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
  std::optional<BundleLock> chart_lock;  // held to the end
  // Its folder, then the guard against writing over a model (it names what the path is), then the format.
  if (usable.ok() && !chart.empty()) usable = check_chart_folder(chart);
  if (usable.ok()) usable = claim_chart(vm, chart, chart_lock);
  if (usable.ok() && !chart.empty()) usable = check_chart_path(chart);
  if (!usable.ok()) {
    std::cerr << "error: " << usable.error().message() << "\n";
    return kExitUsage;
  }
  const CancelOnStop cancel(stop);
  Model model;
  std::optional<QuantizedSearchPlan> plan;
  JsonOutput json(vm.count("json") > 0, "compare");  // from here, stdout is the document's
  json.doc()["model"] = model_path;
  json.doc()["engine"] = vm["engine"].as<std::string>();
  json.doc()["reference"] = vm["reference"].as<std::string>();
  auto opened = open_oracle(vm, model_path, model, SampleUse::FirstFailing, stop, float_model_expectations(vm, plan, false));
  if (const int* code = std::get_if<int>(&opened)) return *code;
  Oracle& o = std::get<SampleOracles>(opened).main();
  std::cout << "\n## outputs\n\n";
  TensorMap actual;
  Verdict verdict = o.evaluate(Candidate::whole(model.graph), cancel.flag(), &actual);
  if (verdict.cancelled) return interrupted();
  print_verdict(verdict, std::cout);
  json.doc()["verdict"] = verdict_json(verdict);
  if (verdict.invalid) return json.print(kExitUsage);
  const int exit_code = verdict.signature.fails() ? kExitFailure : kExitOk;
  if (plan) {
    const int code = quantization_layers(o, *plan, vm.count("all-layers") > 0, chart, cancel, json);
    if (code == kExitInterrupted) return code;
    return json.print(code != 0 ? code : exit_code);
  }

  auto layers = compare_layers(o, cancel.flag());
  if (cancel.requested()) return interrupted();
  std::cout << "\n## layers (accumulated: every value requested as an output; local: each node alone on its "
               "reference inputs)\n\n";
  if (!layers) {
    std::cout << "layerwise run failed: " << layers.error().message() << "\n";
    json.doc()["layers"] = {{"error", layers.error().message()}};
    return json.print(exit_code);
  }
  ErrorOriginOptions eo;
  eo.max_local_runs = static_cast<size_t>(vm["local-runs"].as<int>());
  eo.jobs = o.options().slots;
  eo.on_progress = ProgressLine("local error: nodes run alone", [console = console_from(vm)](const std::string& line) { console.line(line); });
  const ErrorOrigin origin = trace_error_origin(o, *layers, eo, cancel.flag());
  if (cancel.requested()) return interrupted();
  print_error_table(origin, model.graph, vm.count("all-layers") > 0, std::cout);
  json.doc()["layers"] = origin_json(origin, model.graph);
  json.doc()["layers"]["fusion_dependent"] = verdict.signature.fails() && !origin.worst_output;
  std::cout << "\n";
  print_error_findings(origin, model.graph, std::cout);
  if (verdict.signature.fails() && !origin.worst_output)
    std::cout << "warning: the failure disappears when intermediate values are requested as outputs (the engine "
                 "fuses differently, e.g. a fused kernel is split): this failure is fusion-dependent and the "
                 "layerwise table cannot be trusted to locate it\n";
  if (chart.empty()) return json.print(exit_code);
  auto drawn = write_error_chart({chart}, origin, model.graph, histogram_output(o, origin, actual), cancel.flag());
  if (cancel.requested()) return interrupted();
  if (!drawn) {
    std::cerr << "error: " << drawn.error().message() << "\n";
    return kExitUsage;
  }
  std::cout << (drawn->outcome == ChartOutcome::Drawn ? "chart: " + chart : drawn->note) << "\n";
  json.doc()["chart"] = drawn->outcome == ChartOutcome::Drawn ? Json(chart) : Json();
  return json.print(exit_code);
}

}  // namespace reduce::cli
