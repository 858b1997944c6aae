// `reduce convert MODEL --to fp16|bf16 -o OUT.onnx`: the model in mixed precision at the ONNX level
// (core/precision_conversion.h), with nodes kept in FP32 by name or op type; what TensorRT 11 builds as typed.
#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include "command.h"
#include "command_line.h"
#include "core/precision_conversion.h"
#include "core/model_io.h"
#include "core/validate.h"
#include "engine/fp32_nodes.h"
#include "input_options.h"
#include "precision/autocast_rule.h"
#include "core/bundle_lock.h"

namespace reduce::cli {

namespace po = boost::program_options;

namespace {

po::options_description convert_options() {
  po::options_description opts(
      "usage: reduce convert MODEL --to fp16|bf16 -o OUT.onnx [--keep NODE+NODE|@FILE] [--keep-op-types A,B]\n"
      "                      [--data-max X] [--init-max Y] [--inputs ...]\n\n"
      "Converts an FP32 model to FP16 or BF16 at the ONNX level, as TensorRT 11 (strongly typed) and\n"
      "ONNX Runtime run it: nodes whose schema allows the type compute in it, the kept nodes stay in FP32,\n"
      "Casts go where types meet, weights only converted nodes read are stored converted. Graph inputs\n"
      "and outputs keep FP32 unless --no-keep-io-types. `reduce precision` finds the smallest --keep.\n"
      "--data-max/--init-max add Model Optimizer AutoCast's rule (no search): nodes whose FP32 output exceeds\n"
      "X in magnitude on the reference (on --inputs, or seeded random inputs), or that read a weight beyond Y,\n"
      "are kept too (AutoCast's defaults: 512 and 65504).\n\noptions");
  opts.add_options()("help,h", "show this help")("model", po::value<std::string>(), "the FP32 model (.onnx, .onnxtxt)")
      ("to", po::value<std::string>(), "fp16 or bf16")
      ("output,o", po::value<std::string>(), "the converted model (.onnx)")
      ("keep", po::value<std::string>(), "nodes left in FP32: NAME+NAME or @FILE (one name per line)")
      ("keep-op-types", po::value<std::string>(), "op types left in FP32, comma-separated (e.g. LayerNormalization,Softmax)")
      ("no-keep-io-types", "let float graph inputs and outputs take the low type where converted nodes read or write them")
      ("data-max", po::value<std::string>(), "AutoCast's rule: keep nodes whose output exceeds this in magnitude (512)")
      ("init-max", po::value<std::string>(), "AutoCast's rule: keep nodes that read a weight beyond this (65504)")
      ("threads", po::value<int>()->default_value(0), "threads of the reference run for the rule (0: all cores)");
  add_input_options(opts);
  add_output_options(opts, "also list the nodes kept in FP32 by --keep and by --keep-op-types, by name");
  return opts;
}

// -v: the nodes the options kept in FP32, by name (the rule's own are printed at every level).
void print_kept_nodes(const Graph& graph, const MixedPrecisionOptions& options, std::ostream& out) {
  std::vector<std::string> by_name, by_type;
  for (const Node& n : graph.nodes) {
    const std::string shown = n.name.empty() ? "(unnamed " + n.op_type + ")" : n.name;
    if (!n.name.empty() && options.keep_nodes.count(n.name)) by_name.push_back(shown);
    else if (options.keep_op_types.count(n.op_type)) by_type.push_back(shown);
  }
  for (const auto& [what, names] : {std::pair{"kept by --keep (or the rule's thresholds)", &by_name},
                                    std::pair{"kept by --keep-op-types", &by_type}}) {
    out << what << ": " << names->size() << " node(s)" << (names->empty() ? "" : ":");
    for (const auto& name : *names) out << " " << name;
    out << "\n";
  }
}

// A positive threshold ("512", "1e4"), or an error naming the option.
Expected<double> threshold(const po::variables_map& vm, const char* option, double fallback) {
  if (!vm.count(option)) return fallback;
  const std::string text = vm[option].as<std::string>();
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v) && v > 0) return v;
  } catch (const std::exception&) {
  }
  return make_error(std::string("--") + option + ": must be a positive number, not '" + text + "'");
}

}  // namespace

int convert_command(const std::vector<std::string>& args) {
  const po::options_description opts = convert_options();
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (auto done = parse_command_line(args, "convert", opts, pos, vm, "model", "MODEL")) return *done;
  const auto usage = [](const std::string& line) {
    std::cerr << "error: " << line << "\n";
    return kExitUsage;
  };
  if (!vm.count("to")) return usage("convert: missing --to fp16|bf16");
  if (!vm.count("output")) return usage("convert: missing -o OUT.onnx");
  MixedPrecisionOptions options;
  const std::string to = vm["to"].as<std::string>();
  if (to == "fp16") options.to = DType::Float16;
  else if (to == "bf16") options.to = DType::BFloat16;
  else return usage("--to: must be fp16 or bf16, not '" + to + "'");
  options.keep_io_types = !vm.count("no-keep-io-types");
  const std::string model_path = vm["model"].as<std::string>(), out = vm["output"].as<std::string>();
  // Held to the end: the converted model never replaces its FP32 input, nor another convert's output.
  auto claimed = claim_output(out, OutputKind::File, {model_path}, "-o");
  if (!claimed) return usage(claimed.error().message());
  auto model = load_model(model_path);
  if (!model) return usage(model.error().message());
  if (vm.count("keep")) {
    auto keep = parse_fp32_nodes(vm["keep"].as<std::string>());
    if (!keep) return usage(keep.error().at("--keep").message());
    if (Status present = check_fp32_nodes(*keep, model->graph); !present.ok())
      return usage(present.error().at(model_path).message());
    options.keep_nodes.insert(keep->names.begin(), keep->names.end());
  }
  if (vm.count("data-max") || vm.count("init-max")) {
    AutocastRule rule;
    for (auto [option, value] : {std::pair{"data-max", &rule.data_max}, std::pair{"init-max", &rule.init_max}}) {
      auto v = threshold(vm, option, *value);
      if (!v) return usage(v.error().message());
      *value = *v;
    }
    auto samples = prepare_input_samples(vm, *model, model_path);
    if (!samples) return usage(samples.error().message());
    std::vector<std::vector<NamedTensor>> inputs;
    for (auto& sample : *samples) inputs.push_back(std::move(sample.inputs));
    auto kept = autocast_rule_nodes(*model, inputs, rule, vm["threads"].as<int>());
    if (!kept) return usage(kept.error().at(model_path).message());
    // The set goes by name: nodes without one are named node_K (as `reduce precision` names them).
    const bool unnamed = std::any_of(kept->begin(), kept->end(), [&](size_t n) { return model->graph.nodes[n].name.empty(); });
    if (unnamed) {
      make_node_names_unique(*model);
      if (!console_from(vm).quiet()) std::cout << "named the unnamed nodes node_K (the converted model keeps these names)\n";
    }
    std::cout << "AutoCast's rule (data_max " << rule.data_max << ", init_max " << rule.init_max << ", on "
              << inputs.size() << " sample(s)) keeps " << kept->size() << " node(s):";
    for (size_t n : *kept) {
      std::cout << " " << model->graph.nodes[n].name;
      options.keep_nodes.insert(model->graph.nodes[n].name);
    }
    std::cout << "\n";
  }
  if (vm.count("keep-op-types")) {
    std::stringstream list(vm["keep-op-types"].as<std::string>());
    for (std::string op; std::getline(list, op, ',');)
      if (!op.empty()) options.keep_op_types.insert(op);
  }
  auto converted = convert_to_mixed_precision(*model, options);
  if (!converted) return usage(converted.error().at(model_path).message());
  if (Status valid = validate_model(converted->model); !valid.ok())
    return usage(model_path + ": the converted model is not valid: " + valid.error().message());
  if (Status saved = save_model(converted->model, out); !saved.ok()) return usage(saved.error().message());
  std::cout << "converted " << converted->converted_nodes << " nodes to " << to << ", " << options.keep_nodes.size()
            << " kept by name, " << converted->kept_by_rule.size() << " float nodes kept in FP32 by rule, "
            << converted->casts << " Casts, " << converted->converted_initializers << " weights converted: " << out
            << "\n";
  if (!converted->kept_by_rule.empty()) {
    std::cout << "kept by rule (no " << to << " in their schema, subgraphs, or typed by an attribute):";
    for (const auto& name : converted->kept_by_rule) std::cout << " " << (name.empty() ? "(unnamed)" : name);
    std::cout << "\n";
  }
  if (console_from(vm).verbose()) print_kept_nodes(model->graph, options, std::cout);
  return kExitOk;
}

}  // namespace reduce::cli
