// `reduce compare MODEL --engine SPEC`: per-output error statistics, then every intermediate value
// compared with the reference (layerwise table) and the first diverging node.
#include <boost/program_options.hpp>

#include <iostream>

#include "command.h"
#include "command_line.h"
#include "input_options.h"
#include "oracle_options.h"
#include "session/verdict_report.h"
#include "stop_on_signal.h"

namespace reduce::cli {

namespace po = boost::program_options;

namespace {

po::options_description compare_options() {
  po::options_description opts(
      "usage: reduce compare MODEL --engine SPEC [options]\n\n"
      "Compares the engine under test with the reference on every output (error statistics), then on\n"
      "every intermediate value (a layerwise table, with the first diverging node). Requesting\n"
      "intermediate values can change what an engine fuses; when that makes the failure disappear,\n"
      "the layerwise table cannot be trusted and compare says so.\n"
      "Exit code: 0 the outputs agree, 1 they do not, 2 bad usage or input.\n\noptions");
  opts.add_options()("help,h", "show this help")("model", po::value<std::string>(), "the model (.onnx or .onnxtxt)")
      ("all-layers", "print every value, not only the failing ones and the first few");
  add_oracle_options(opts);
  add_input_options(opts);
  return opts;
}

// The layerwise table and the first diverging node; true when a graph output fails layerwise.
bool print_layers(const std::vector<Oracle::LayerError>& layers, const Graph& g, bool all) {
  std::optional<size_t> first_bad;
  bool outputs_fail_layerwise = false;
  for (size_t k = 0; k < layers.size(); ++k) {
    const auto& l = layers[k];
    if (!l.comparison.passed && !first_bad) first_bad = k;
    for (const auto& vi : g.outputs)
      if (vi.name == l.value && !l.comparison.passed) outputs_fail_layerwise = true;
  }
  std::cout << "| # | node | op | value | max abs | max rel | NaN | Inf | status |\n|---|---|---|---|---|---|---|---|---|\n";
  size_t printed = 0;
  for (size_t k = 0; k < layers.size(); ++k) {
    const auto& l = layers[k];
    const bool show = all || !l.comparison.passed || k < 5 || (first_bad && k + 2 >= *first_bad && k <= *first_bad + 2);
    if (!show || (!all && printed >= 60)) continue;
    ++printed;
    const Node& n = g.nodes[l.node];
    std::string status = l.comparison.passed ? "ok" : l.comparison.is_nonfinite_failure() ? "NONFINITE" : "MISMATCH";
    std::cout << "| " << k << " | " << (n.name.empty() ? "(unnamed)" : n.name) << " | " << n.op_type << " | " << l.value
              << " | " << format_number(l.comparison.max_abs) << " | " << format_number(l.comparison.max_rel) << " | "
              << l.comparison.nan << " | " << l.comparison.inf << " | " << status << " |\n";
  }
  if (printed < layers.size() && !all) std::cout << "(" << layers.size() - printed << " more values agree or are not shown; --all-layers)\n";
  if (first_bad) {
    const auto& l = layers[*first_bad];
    const Node& n = g.nodes[l.node];
    std::cout << "\nfirst diverging node: " << (n.name.empty() ? "(unnamed)" : n.name) << " (" << n.op_type
              << "), value '" << l.value << "'\n";
  } else {
    std::cout << "\nno value diverges when every value is requested\n";
  }
  return outputs_fail_layerwise;
}

}  // namespace

int compare_command(const std::vector<std::string>& args, std::stop_token stop) {
  const po::options_description opts = compare_options();
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (auto done = parse_command_line(args, "compare", opts, pos, vm, "model", "MODEL")) return *done;
  const std::string model_path = vm["model"].as<std::string>();
  const CancelOnStop cancel(stop);
  Model model;
  auto opened = open_oracle(vm, model_path, model, stop);
  if (const int* code = std::get_if<int>(&opened)) return *code;
  Oracle& o = *std::get<std::unique_ptr<Oracle>>(opened);
  std::cout << "\n## outputs\n\n";
  Verdict verdict = o.evaluate(Candidate::whole(model.graph), cancel.flag());
  if (verdict.cancelled) return interrupted();
  print_verdict(verdict, std::cout);
  if (verdict.invalid) return kExitUsage;

  auto layers = o.compare_layers(cancel.flag());
  if (cancel.requested()) return interrupted();
  std::cout << "\n## layers (every value requested as an output)\n\n";
  if (!layers) {
    std::cout << "layerwise run failed: " << layers.error().message() << "\n";
    return verdict.signature.fails() ? kExitFailure : kExitOk;
  }
  const bool outputs_fail_layerwise = print_layers(*layers, model.graph, vm.count("all-layers") > 0);
  if (verdict.signature.fails() && !outputs_fail_layerwise)
    std::cout << "warning: the failure disappears when intermediate values are requested as outputs (the engine "
                 "fuses differently, e.g. a fused kernel is split): this failure is fusion-dependent and the "
                 "layerwise table cannot be trusted to locate it\n";
  return verdict.signature.fails() ? kExitFailure : kExitOk;
}

}  // namespace reduce::cli
