// `reduce precision MODEL --engine SPEC`: the smallest set of nodes to keep in FP32 so that the
// model passes (precision/precision.h); prints it with TensorRT and Polygraphy flags, writes a bundle.
#include <boost/program_options.hpp>


#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <iostream>

#include "command.h"
#include "command_line.h"
#include "core/mapped_file.h"
#include "float_model_option.h"
#include "input_options.h"
#include "oracle_options.h"
#include "session/bundle.h"
#include "session/bundle_lock.h"
#include "core/model_io.h"
#include "core/quantized_nodes.h"
#include "precision/precision.h"
#include "precision/quantization.h"
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

// --strategy's help: one line per strategy of precision/src/strategies/strategies.def.
const std::string& strategy_help() {
  static const std::string help = [] {
    std::string s;
    for (const auto& st : precision_strategies()) s += (s.empty() ? "" : "\n") + st.name + ": " + st.help;
    return s;
  }();
  return help;
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
      "float node in FP32 (not a precision problem), 6 the answer did not hold on a fresh run (--confirm),\n"
      "130 interrupted (the best set so far is kept).\n\n"
      "On a quantized (QuantizeLinear/DequantizeLinear) MODEL with --float-model, or on an engine without\n"
      "per-node precision: the smallest set of quantized nodes to leave in float so that MODEL's outputs\n"
      "are within tolerance of the float model's (exit 3: they already are, 4: not even with every\n"
      "quantized node in float).\n\noptions");
  opts.add_options()("help,h", "show this help")("model", po::value<std::string>(), "the model (.onnx or .onnxtxt)")
      ("output,o", po::value<std::string>(), "bundle folder: precision.txt, report.md, report.json")
      ("jobs,j", po::value<int>()->default_value(1), "sets checked at once")
      ("confirm", po::value<int>()->default_value(1),
       "fresh runs, after the search, of the model with the set in FP32 (must pass on every sample) and as it is "
       "(must fail the same way), 1..1000; exit 6 when one does not")
      ("local-runs", po::value<int>()->default_value(2000),
       "at most this many nodes run alone to rank them by the error they add (0: none)")
      ("strategy", po::value<std::string>()->default_value("default"), strategy_help().c_str())
      ("direction", po::value<std::string>()->default_value("forward"),
       "for the baselines: forward (K nodes from the inputs) or reverse (from the outputs)")
      ("tolerance-sweep", po::value<std::string>(),
       "T1,T2,...: the set at each tolerance, loose to tight (each T is both --atol and --rtol);\n"
       "prints one line per tolerance, writes sweep.json, and the bundle of the tightest that found a set")
      ("float-model", po::value<std::string>(),
       "MODEL is quantized (Q/DQ) and this is its float model (the quantizer's input; nodes and weights matched by\n"
       "name): find the quantized nodes to leave in float so that MODEL's outputs are within tolerance of this\n"
       "model's. Without it, a Q/DQ MODEL on an engine without per-node precision is compared with itself with\n"
       "every Q/DQ pair folded (folded weights keep their rounding)");
  add_oracle_options(opts);
  add_input_options(opts);
  return opts;
}

// The set found, one node per line, with how to deploy it: the flags that keep it in FP32 on
// TensorRT 10 and Polygraphy, or, on a strongly typed engine (`typed`), the converted model.
void print_fp32_set(const PrecisionOutcome& out, std::optional<DType> typed) {
  std::cout << "\n" << out.pinned.size() << " of " << out.candidates << " float nodes in FP32"
            << (out.one_minimal ? " (1-minimal)" : "") << (out.strategy != "default" ? " (" + out.strategy + ")" : "")
            << ", " << out.checks << " sets checked"
            << (out.samples > 1 ? ", passes on all " + std::to_string(out.samples) + " samples" : std::string()) << ":\n";
  for (const auto& p : out.pinned) std::cout << "  " << p.name << " (" << p.op_type << ")\n";
  if (out.confirm_runs > 0)
    std::cout << (out.not_confirmed() ? "NOT CONFIRMED: " : "confirmed: ") << "with the set " << out.set_passed_again << " of "
              << out.confirm_runs << " fresh run(s) pass, as it is " << out.original_failed_again << " of " << out.confirm_runs
              << " fail the same way" << (out.not_confirmed() ? " (a flaky engine: do not trust this set)" : "") << "\n";
  if (!typed) {
    std::cout << "\nTensorRT:   " << tensorrt_flags(out.pinned) << "\nPolygraphy: " << polygraphy_flags(out.pinned) << "\n";
    return;
  }
  // Strongly typed (TensorRT 11): no flag keeps a layer in FP32; the bundle's model holds the set.
  const std::string file = *typed == DType::BFloat16 ? "model_bf16.onnx" : "model_fp16.onnx";
  std::cout << "\nTensorRT 11: trtexec --onnx=" << file << "  (the bundle's model converted with the set kept in FP32)"
            << "\nAutoCast:    " << autocast_command(out.pinned, *typed, file) << "\n";
}

// Where the quantized weights' float values came from (the float model, or dequantized).
void print_float_model_matches(const PrecisionOutcome& out) {
  if (!out.quantization) return;
  const auto& q = *out.quantization;
  if (!q.float_model.empty())
    std::cout << "quantized nodes found in the float model: "
              << q.nodes_matched_by_name + q.nodes_matched_by_place + q.nodes_matched_by_value << " of " << q.quantized_nodes
              << " (" << q.nodes_matched_by_name << " by name, " << q.nodes_matched_by_place << " by place among their op type, "
              << q.nodes_matched_by_value << " by weight values only)\n";
  std::cout << "weights in float: " << q.weights_from_float_model << " from the float model, " << q.weights_folded
            << " folded (they keep the quantizer's rounding)\n";
}

// The nodes to leave in float, the errors, and how to quantize again without them.
void print_float_set(const PrecisionOutcome& out) {
  std::cout << "\n" << out.pinned.size() << " of " << out.candidates << " quantized nodes left in float"
            << (out.one_minimal ? " (1-minimal)" : "") << (out.strategy != "default" ? " (" + out.strategy + ")" : "")
            << ", " << out.checks << " sets checked"
            << (out.samples > 1 ? ", passes on all " + std::to_string(out.samples) + " samples" : std::string()) << ":\n";
  for (const auto& p : out.pinned)
    std::cout << "  " << p.name << " (" << p.op_type << "), quantized alone it adds " << p.local_error << " x the tolerance\n";
  if (out.confirm_runs > 0)
    std::cout << (out.not_confirmed() ? "NOT CONFIRMED: " : "confirmed: ") << "partially quantized " << out.set_passed_again
              << " of " << out.confirm_runs << " fresh run(s) pass, quantized " << out.original_failed_again << " of "
              << out.confirm_runs << " fail the same way" << (out.not_confirmed() ? " (a flaky engine: do not trust this set)" : "")
              << "\n";
  const auto errors = [](const Verdict& v) {
    std::string s;
    for (const auto& o : v.outputs) s += (s.empty() ? "" : ", ") + o.name + " " + std::to_string(o.max_abs);
    return s;
  };
  std::cout << "largest absolute error against the float model: quantized " << errors(out.before) << "; partially quantized "
            << errors(out.after) << "\n";
  print_float_model_matches(out);
  std::cout << "\nONNX Runtime:\n" << onnxruntime_quantize_call(out.pinned) << "\nModel Optimizer:\n"
            << modelopt_quantize_command(out.pinned) << "\n";
}

constexpr size_t kMaxSweep = 16;

// "0.1,0.01,1e-3": finite positive tolerances, loose to tight, each once.
Expected<std::vector<double>> parse_sweep(const std::string& text) {
  std::vector<double> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    char* end = nullptr;
    const double t = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(t) || t <= 0)
      return Error{"--tolerance-sweep", "'" + item + "' is not a positive number (expected e.g. 0.1,0.01,0.001)"};
    out.push_back(t);
    start = comma + 1;
  }
  std::sort(out.begin(), out.end(), std::greater<>());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.size() > kMaxSweep) return Error{"--tolerance-sweep", "at most " + std::to_string(kMaxSweep) + " tolerances"};
  return out;
}

std::string outcome_line(const PrecisionOutcome& out) {
  const bool quantized = out.quantization.has_value();
  switch (out.kind) {
    case PrecisionOutcome::Kind::DoesNotFail: return quantized ? "passes with every node quantized" : "passes with nothing in FP32";
    case PrecisionOutcome::Kind::FailsEvenInFp32:
      return quantized ? "fails even with every quantized node in float" : "fails even with every float node in FP32";
    case PrecisionOutcome::Kind::Found: break;
  }
  std::string names;
  for (const auto& p : out.pinned) names += (names.empty() ? "" : ", ") + p.name;
  return std::to_string(out.pinned.size()) + (quantized ? " nodes left in float (" : " nodes in FP32 (") +
         std::to_string(out.checks) + " sets checked" +
         (out.not_confirmed() ? ", NOT CONFIRMED on a fresh run" : "") + "): " + names;
}

// The set at each tolerance, loose to tight. Exit 0 when some tolerance found a set; otherwise the
// exit code of the tightest tolerance's outcome.
int run_sweep(const std::vector<Oracle*>& samples, const PrecisionOptions& options, const std::vector<double>& sweep, const std::string& out_dir,
              const std::string& command, const NodeRenaming& renamed, std::stop_token stop,
              const QuantizedSearchPlan* plan) {
  PrecisionSearch search;
  if (plan)
    search = [plan](std::vector<Oracle*> s, const PrecisionOptions& o, std::stop_token t) { return find_float_nodes(std::move(s), *plan, o, t); };
  auto done = sweep_tolerances(samples, options, sweep, stop, [](const SweepRow& row) {
    std::cout << "tolerance " << row.tolerance << ": " << outcome_line(row.outcome) << "\n" << std::flush;
  }, search);
  if (!done) {
    std::cerr << "error: " << done.error().message() << "\n";
    return kExitUsage;
  }
  const PrecisionOutcome* tightest = done->tightest_found();
  if (done->stopped) return interrupted(tightest ? "; sweep.json and the bundle were not written" : "");
  if (!out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    Status written = ec ? Status(Error{out_dir, "cannot create folder: " + ec.message()}) : Status{};
    if (written.ok()) written = write_file_atomic(std::filesystem::path(out_dir) / "sweep.json", sweep_json(*done));
    if (written.ok() && tightest) {
      PrecisionOutcome bundled = *tightest;
      bundled.renamed = renamed;
      written = plan ? write_quantization_bundle(out_dir, *samples[0], *plan, bundled, command)
                     : write_precision_bundle(out_dir, *samples[0], bundled, command);
    }
    if (!written.ok()) {
      std::cerr << "error: " << written.error().message() << "\n";
      return kExitUsage;
    }
    std::cout << "sweep: " << out_dir << "/sweep.json" << (tightest ? " (bundle: the tightest tolerance with a set)" : "") << "\n";
  }
  const PrecisionOutcome* answer = done->answer();
  if (!answer) return kExitOk;
  switch (answer->kind) {
    case PrecisionOutcome::Kind::Found: return answer->not_confirmed() ? kExitNotConfirmed : kExitOk;
    case PrecisionOutcome::Kind::DoesNotFail: return kExitDoesNotFail;
    case PrecisionOutcome::Kind::FailsEvenInFp32: return kExitNotPrecision;
  }
  return kExitOk;
}

// The options checked before anything is loaded; the tolerances of --tolerance-sweep (none without).
Expected<std::vector<double>> check_precision_options(const po::variables_map& vm) {
  REDUCE_TRY(check_int_range("-j", vm["jobs"].as<int>(), 1, kMaxParallel));
  REDUCE_TRY(check_int_range("--local-runs", vm["local-runs"].as<int>(), 0, kMaxLocalRuns));
  REDUCE_TRY(check_int_range("--confirm", vm["confirm"].as<int>(), 1, kMaxConfirm));
  const std::string strategy = vm["strategy"].as<std::string>(), direction = vm["direction"].as<std::string>();
  if (!is_precision_strategy(strategy))
    return Error{"--strategy", "must be " + precision_strategy_names() + ", not '" + strategy + "'"};
  if (direction != "forward" && direction != "reverse")
    return Error{"--direction", "must be forward or reverse, not '" + direction + "'"};
  if (!vm.count("tolerance-sweep")) return std::vector<double>{};
  return parse_sweep(vm["tolerance-sweep"].as<std::string>());
}

// -o DIR: the folder policy of a bundle (session/bundle.h), then its lock (session/bundle_lock.h).
Status claim_bundle_folder(const std::string& out_dir, const std::string& model_path, std::optional<BundleLock>& lock) {
  REDUCE_TRY(check_bundle_folder(out_dir, model_path, false));
  REDUCE_ASSIGN(BundleLock claimed, BundleLock::acquire(out_dir));
  lock.emplace(std::move(claimed));
  return {};
}

}  // namespace

int precision_command(const std::vector<std::string>& args, std::stop_token stop) {
  const po::options_description opts = precision_options();
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (auto done = parse_command_line(args, "precision", opts, pos, vm, "model", "MODEL")) return *done;
  const std::string model_path = vm["model"].as<std::string>();
  const std::string strategy = vm["strategy"].as<std::string>(), direction = vm["direction"].as<std::string>();
  const std::string out_dir = vm.count("output") ? vm["output"].as<std::string>() : "";
  auto sweep = check_precision_options(vm);
  Status usable = sweep ? Status{} : Status(sweep.error());
  std::optional<BundleLock> lock;  // held to the end: one writer per bundle folder
  if (usable.ok() && !out_dir.empty()) usable = claim_bundle_folder(out_dir, model_path, lock);
  if (!usable.ok()) {
    std::cerr << "error: " << usable.error().message() << "\n";
    return kExitUsage;
  }
  Model model;
  std::optional<QuantizedSearchPlan> plan;
  auto opened = open_oracle(vm, model_path, model, SampleUse::KeepAll, stop, float_model_expectations(vm, plan, true));
  if (const int* code = std::get_if<int>(&opened)) return *code;
  const SampleOracles& opened_samples = std::get<SampleOracles>(opened);
  Oracle& oracle = opened_samples.main();
  std::vector<Oracle*> samples;  // in sample order
  for (const auto& o : opened_samples.oracles) samples.push_back(o.get());
  // A set names nodes: each name must name one node (the bundle's model and reports use them).
  const NodeRenaming renamed = make_node_names_unique(model);
  if (renamed.unnamed) std::cout << "named " << renamed.unnamed << " unnamed nodes node_K (engines see these names)\n";
  if (renamed.duplicates)
    std::cout << "renamed " << renamed.duplicates << " nodes whose name an earlier node has to NAME_K, so that every "
              << "name in the set means one node (engines see these names)\n";

  PrecisionOptions po_;
  po_.jobs = vm["jobs"].as<int>();
  po_.max_local_runs = static_cast<size_t>(vm["local-runs"].as<int>());
  po_.strategy = strategy;
  po_.from_outputs = direction == "reverse";
  po_.confirm = vm["confirm"].as<int>();
  po_.log = [](const std::string& line) { std::cout << line << "\n" << std::flush; };
  const NodeRenaming all_renamed{renamed.unnamed, renamed.duplicates + opened_samples.renamed_nodes};
  if (plan)
    std::cout << "quantized model: " << plan->nodes.size() << " nodes read quantized values; searching which to leave in float "
              << "against " << (plan->float_model_source.empty() ? "the model with every Q/DQ pair folded" : plan->float_model_source)
              << "\n";
  if (!sweep->empty())
    return run_sweep(samples, po_, *sweep, out_dir, command_line(args), all_renamed, stop, plan ? &*plan : nullptr);
  auto found = plan ? find_float_nodes(samples, *plan, po_, stop) : find_fp32_nodes(samples, po_, stop);
  if (!found) {
    std::cerr << "error: " << model_path << ": " << found.error().message() << "\n";
    return kExitUsage;
  }
  found->renamed = all_renamed;
  const PrecisionOutcome& out = *found;
  if (out.stopped && out.pinned.empty()) return interrupted("; nothing written");
  if (out.kind == PrecisionOutcome::Kind::DoesNotFail) {
    std::cout << (plan ? "does not fail: the quantized model's outputs are within tolerance of the float model's\n"
                       : "does not fail: the model passes with nothing in FP32\n");
    return kExitDoesNotFail;
  }
  if (out.kind == PrecisionOutcome::Kind::FailsEvenInFp32) {
    std::cout << (plan ? "fails even with every quantized node in float: not a quantization problem ("
                       : "fails even in FP32: not a precision problem (")
              << out.after.signature.to_string() << ")\n";
    print_float_model_matches(out);
    return kExitNotPrecision;
  }
  // The set, how to deploy it, and the bundle: the model partially quantized, or (a strongly typed
  // engine) converted with the set in FP32.
  const std::optional<DType> typed = plan ? std::nullopt : oracle.engine_converts_to();
  std::string extra_file = !typed ? "" : *typed == DType::BFloat16 ? "model_bf16.onnx, " : "model_fp16.onnx, ";
  if (plan) {
    print_float_set(out);
    extra_file = std::string(kPartiallyQuantizedFile) + ", ";
  } else {
    print_fp32_set(out, typed);
  }
  if (!out_dir.empty()) {
    const Status st = plan ? write_quantization_bundle(out_dir, oracle, *plan, out, command_line(args))
                           : write_precision_bundle(out_dir, oracle, out, command_line(args));
    if (!st.ok()) {
      std::cerr << "error: " << st.error().message() << "\n";
      return kExitUsage;
    }
    std::cout << "bundle: " << out_dir << " (precision.txt, model.onnx, " << extra_file << "report.md, report.json)\n";
  }
  if (out.stopped) return interrupted("; the best set so far is kept");
  return out.not_confirmed() ? kExitNotConfirmed : kExitOk;
}

}  // namespace reduce::cli
