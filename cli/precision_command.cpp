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
#include "float_model_option.h"
#include "input_options.h"
#include "oracle_options.h"
#include "session/bundle.h"
#include "core/bundle_lock.h"
#include "core/model_io.h"
#include "adapters/script_words.h"
#include "precision/question.h"
#include "oracle/verdict_report.h"
#include "stop_on_signal.h"

namespace reduce::cli {

namespace po = boost::program_options;

namespace {

constexpr int kMaxLocalRuns = 1000000;

// The command line again, each argument a shell word (for the report's "reproduce" line).
std::string command_line(const std::vector<std::string>& args) {
  return args.empty() ? "reduce precision" : "reduce precision " + shell_command_line(args);
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
      ("jobs,j", po::value<int>()->default_value(0),
       "sets checked at once (0: --slots, else the number of cores, as every command's -j; the set found is the same for every -j)")
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
  add_output_options(opts, "one line per engine run (nodes, time, verdict) on stderr, the ranking's nodes run alone included");
  return opts;
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

// The exit code of an outcome that ran to its end.
int exit_code(const PrecisionOutcome& out) {
  switch (out.kind) {
    case PrecisionOutcome::Kind::Found: return out.not_confirmed() ? kExitNotConfirmed : kExitOk;
    case PrecisionOutcome::Kind::DoesNotFail: return kExitDoesNotFail;
    case PrecisionOutcome::Kind::FailsEvenInFp32: return kExitNotPrecision;
  }
  return kExitOk;
}

// The set at each tolerance, loose to tight. Exit 0 when some tolerance found a set; otherwise the
// exit code of the tightest tolerance's outcome.
int run_sweep(const PrecisionQuestion& question, const std::vector<Oracle*>& samples, const PrecisionOptions& options,
              const std::vector<double>& sweep, const std::string& out_dir, const std::string& command,
              const NodeRenaming& renamed, std::stop_token stop) {
  auto done = question.sweep(samples, options, sweep, stop, [](const SweepRow& row) {
    std::cout << "tolerance " << row.tolerance << ": " << outcome_line(row.outcome) << "\n" << std::flush;
  });
  if (!done) {
    std::cerr << "error: " << done.error().message() << "\n";
    return kExitUsage;
  }
  const PrecisionOutcome* tightest = done->tightest_found();
  if (done->stopped) return interrupted(tightest ? "; sweep.json and the bundle were not written" : "");
  if (!out_dir.empty()) {
    if (const Status written = question.write_sweep(out_dir, *samples[0], *done, renamed, command); !written.ok()) {
      std::cerr << "error: " << written.error().message() << "\n";
      return kExitUsage;
    }
    std::cout << "sweep: " << out_dir << "/sweep.json" << (tightest ? " (bundle: the tightest tolerance with a set)" : "") << "\n";
  }
  const PrecisionOutcome* answer = done->answer();
  return answer ? exit_code(*answer) : kExitOk;
}

// The options checked before anything is loaded; the tolerances of --tolerance-sweep (none without).
Expected<std::vector<double>> check_precision_options(const po::variables_map& vm) {
  REDUCE_TRY(check_int_range("-j", vm["jobs"].as<int>(), 0, kMaxParallel));
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

// -o DIR: the folder policy of a bundle (session/bundle.h), then its lock (core/bundle_lock.h).
Status claim_bundle_folder(const std::string& out_dir, const std::string& model_path, std::optional<BundleLock>& lock) {
  REDUCE_TRY(check_bundle_folder(out_dir, model_path, false));
  REDUCE_ASSIGN(BundleLock claimed, BundleLock::acquire(out_dir));
  lock.emplace(std::move(claimed));
  return {};
}

// A set names nodes: each name must name one node (the bundle's model and reports use them). The
// renaming, with the nodes the samples' loading renamed (`renamed_on_load`).
NodeRenaming name_every_node(Model& model, size_t renamed_on_load, const Console& console) {
  const NodeRenaming renamed = make_node_names_unique(model);
  if (console.quiet()) return {renamed.unnamed, renamed.duplicates + renamed_on_load};
  if (renamed.unnamed) std::cout << "named " << renamed.unnamed << " unnamed nodes node_K (engines see these names)\n";
  if (renamed.duplicates)
    std::cout << "renamed " << renamed.duplicates << " nodes whose name an earlier node has to NAME_K, so that every "
              << "name in the set means one node (engines see these names)\n";
  return {renamed.unnamed, renamed.duplicates + renamed_on_load};
}

PrecisionOptions precision_search_options(const po::variables_map& vm) {
  PrecisionOptions options;
  options.jobs = vm["jobs"].as<int>();
  options.max_local_runs = static_cast<size_t>(vm["local-runs"].as<int>());
  options.strategy = vm["strategy"].as<std::string>();
  options.from_outputs = vm["direction"].as<std::string>() == "reverse";
  options.confirm = vm["confirm"].as<int>();
  // The search's narrative (ranking, phases); -q keeps only the answer.
  if (!console_from(vm).quiet()) options.log = [](const std::string& line) { std::cout << line << "\n" << std::flush; };
  return options;
}

// The outcome of one search: printed, and (a set found, -o DIR) its bundle written.
int answer(const PrecisionQuestion& question, const Oracle& oracle, const PrecisionOutcome& out, const std::string& out_dir,
           const std::string& command) {
  if (out.stopped && out.pinned.empty()) return interrupted("; nothing written");
  if (out.kind != PrecisionOutcome::Kind::Found) {
    std::cout << question.no_set(out);
    return exit_code(out);
  }
  std::cout << question.answer(out, oracle);
  if (!out_dir.empty()) {
    if (const Status st = question.write_bundle(out_dir, oracle, out, command); !st.ok()) {
      std::cerr << "error: " << st.error().message() << "\n";
      return kExitUsage;
    }
    std::cout << "bundle: " << out_dir << " (" << question.bundle_files(oracle) << ")\n";
  }
  if (out.stopped) return interrupted("; the best set so far is kept");
  return exit_code(out);
}

}  // namespace

int precision_command(const std::vector<std::string>& args, std::stop_token stop) {
  const po::options_description opts = precision_options();
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (auto done = parse_command_line(args, "precision", opts, pos, vm, "model", "MODEL")) return *done;
  const std::string model_path = vm["model"].as<std::string>();
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
  // A float model needs the engine under test; a Q/DQ model is compared with its folded self.
  if (Status named = plan ? Status{} : require_engine(vm); !named.ok()) {
    std::cerr << "error: " << named.error().message() << "\n";
    return kExitUsage;
  }
  const SampleOracles& opened_samples = std::get<SampleOracles>(opened);
  std::vector<Oracle*> samples;  // in sample order
  for (const auto& o : opened_samples.oracles) samples.push_back(o.get());
  const NodeRenaming renamed = name_every_node(model, opened_samples.renamed_nodes, console_from(vm));
  const PrecisionQuestion question(std::move(plan));
  PrecisionOptions options = precision_search_options(vm);
  if (options.jobs == 0) options.jobs = opened_samples.main().options().slots;  // -j 0: the slots (--slots, else the cores)
  if (!console_from(vm).quiet()) std::cout << question.intro();
  if (!sweep->empty()) return run_sweep(question, samples, options, *sweep, out_dir, command_line(args), renamed, stop);
  auto found = question.search(samples, options, stop);
  if (!found) {
    std::cerr << "error: " << model_path << ": " << found.error().message() << "\n";
    return kExitUsage;
  }
  found->renamed = renamed;
  return answer(question, opened_samples.main(), *found, out_dir, command_line(args));
}

}  // namespace reduce::cli
