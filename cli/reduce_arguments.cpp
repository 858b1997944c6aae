// Parsing the options of `reduce MODEL`.
#include "reduce_arguments.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iostream>
#include <sstream>
#include <thread>

#include "command.h"
#include "command_line.h"
#include "input_options.h"
#include "adapters/script_words.h"
#include "cluster/mpi_launch.h"
#include "oracle_options.h"
#include "session/bundle.h"

namespace reduce::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

// "one of: default (...), ..." from the reducer's list of strategies.
std::string strategy_help() {
  std::string text = "the search:";
  for (const auto& s : reduce_strategy_list())
    if (s.offered) text += " " + s.name + " (" + s.help + ");";
  text.back() = '.';
  return text;
}

po::options_description reduce_options() {
  po::options_description opts(
      "usage: reduce MODEL.onnx --engine SPEC [options]\n\n"
      "Shrinks MODEL to the smallest model that still shows the same failure on the engine (same kind,\n"
      "same normalized error message, or a mismatch of comparable size) and writes a bundle: model.onnx,\n"
      "inputs/, expected/, actual/, report.json, report.md, graph.svg, journal.\n"
      "Exit code: 0 bundle written, 3 the model does not fail, 6 the reproducer did not fail again on a fresh run,\n"
      "7 the engine fails the same way on a one-node model (not this model's failure), 2 bad usage or input.\n\noptions");
  opts.add_options()("help,h", "show this help")("model", po::value<std::string>(), "the failing model")
      ("output,o", po::value<std::string>(), "bundle folder (default: <model-stem>.reduced)")
      ("jobs,j", po::value<int>()->default_value(0), "checks in flight (0: --slots, else the number of cores; at most 1024)")
      ("strategy", po::value<std::string>()->default_value("default"), strategy_help().c_str())
      ("passes", po::value<std::string>(), "comma-separated passes to run (default: all; see --print-passes)")
      ("skip-passes", po::value<std::string>(), "comma-separated passes not to run")
      ("print-passes", "list the reduction passes and exit")
      ("resume", "continue from the bundle's journal")
      ("max-engine-runs", po::value<long long>()->default_value(0),
       "stop the search once the engine under test has run N times (0: no limit): the best reproducer so far is "
       "checked again and written, not certified 1-minimal (report.json engine_run_budget); exit 0")
      ("simplify-runs", po::value<std::string>()->default_value("0"),
       "engine runs the simplification passes (cut-as-constant, shape-reduction, fill-weights, drop-attributes) may "
       "spend in all, or `all` (no limit; the default when --passes names the passes); node removal and "
       "certification are never limited (report.json simplification)")
      ("confirm", po::value<int>(),
       "fresh runs of the reproducer on the engine before it is reported (1..1000; never from the cache); "
       "exit 6 when one does not fail the same way. Default: 1, or 3 for a reproducer of 1 or 2 nodes "
       "(where reductions on an engine that fails at random end)")
      ("allow-model-independent",
       "reduce even when the engine fails the same way on a one-node model (a check that fails on anything on "
       "purpose); by default that stops before the search with exit 7, since any one node would \"reproduce\" it")
      ("save-format", po::value<std::string>()->default_value("pb"),
       "pb: the bundle's tensors as inputs/input_K.pb and expected/output_K.pb; polygraphy: also inputs.json and "
       "expected.json for `polygraphy run model.onnx --load-inputs inputs.json --load-outputs expected.json`")
      ("no-inline-if", "keep If nodes as they are (default: each If is replaced by the branch the recorded run took when "
                       "the failure stays the same, so that the nodes of its body are reduced too)")
      ("no-unroll-loops", "keep Loop and Scan nodes as they are (default: each is replaced by as many copies of its body "
                          "as the recorded run made iterations when the failure stays the same)")
      ("max-unrolled-nodes", po::value<uint64_t>()->default_value(100000),
       "nodes that unrolling Loop and Scan nodes may add in all (1..10000000); a node that would exceed it stays")
      ("rank-timeout", po::value<double>()->default_value(30),
       "under mpirun or srun: seconds a worker rank may stay silent before rank 0 drops it and checks its "
       "candidates elsewhere, or rank 0 before the workers stop (0.1..3600)");
  add_oracle_options(opts);
  add_input_options(opts);
  add_output_options(opts, "one line per check of the search and per engine run (nodes, time, verdict) on stderr");
  return opts;
}

void print_passes() {
  for (const auto& p : reduce_passes()) {
    const size_t length = std::strlen(p.name);
    std::cout << p.name << std::string(length < 20 ? 20 - length : 1, ' ') << p.help
              << (p.simplifies ? " [simplifies: --simplify-runs]" : "") << "\n";
  }
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// The exact command to reproduce: `reduce MODEL options...`.
std::string command_line(const std::vector<std::string>& args) {
  return args.empty() ? "reduce" : "reduce " + shell_command_line(args);
}

// Search options; -j 0 means one check per --slots slot when slots are given, else one per core.
std::variant<ReduceOptions, int> search_options(const po::variables_map& vm) {
  ReduceOptions ro;
  ro.jobs = vm["jobs"].as<int>();
  if (Status s = check_int_range("-j", ro.jobs, 0, kMaxParallel); !s.ok()) {
    std::cerr << "error: " << s.error().message() << "\n";
    return kExitUsage;
  }
  if (ro.jobs == 0 && vm["slots"].as<int>() > 0) ro.jobs = vm["slots"].as<int>();
  if (ro.jobs == 0) ro.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ro.strategy = vm["strategy"].as<std::string>();
  const auto& strategies = reduce_strategies();
  if (std::find(strategies.begin(), strategies.end(), ro.strategy) == strategies.end()) {
    std::cerr << "error: --strategy: unknown strategy '" << ro.strategy << "' (" << offered_strategies() << ")\n";
    return kExitUsage;
  }
  const auto chosen = vm.count("passes") ? split_list(vm["passes"].as<std::string>()) : std::vector<std::string>{};
  const auto skipped = vm.count("skip-passes") ? split_list(vm["skip-passes"].as<std::string>()) : std::vector<std::string>{};
  auto passes = select_passes(chosen, skipped);
  if (!passes) {
    std::cerr << "error: " << (select_passes(chosen).ok() ? "--skip-passes" : "--passes") << ": " << passes.error().message() << "\n";
    return kExitUsage;
  }
  ro.passes = std::move(*passes);
  ro.verbose = vm.count("verbose") > 0;
  return ro;
}

}  // namespace

std::variant<po::variables_map, int> parse_reduce_options(const std::vector<std::string>& args) {
  const po::options_description opts = reduce_options();
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (auto done = parse_command_line(args, "reduce", opts, pos, vm)) return *done;
  return vm;
}

std::variant<ReduceArguments, int> parse_reduce_arguments(const std::vector<std::string>& args) {
  const po::options_description opts = reduce_options();
  po::positional_options_description pos;
  pos.add("model", 1);
  ReduceArguments parsed;
  po::variables_map& vm = parsed.vm;
  if (auto done = parse_command_line(args, "reduce", opts, pos, vm)) return *done;
  if (vm.count("print-passes")) {
    print_passes();
    return kExitOk;
  }
  if (!vm.count("model")) {
    std::cerr << "error: reduce: missing MODEL (see `reduce --help`)\n";
    return kExitUsage;
  }
  auto ro = search_options(vm);
  if (const int* code = std::get_if<int>(&ro)) return *code;
  SessionOptions& s = parsed.session;
  s.model_path = vm["model"].as<std::string>();
  s.out_dir = vm.count("output") ? fs::path(vm["output"].as<std::string>())
                                 : fs::path(s.model_path.stem().string() + ".reduced");
  s.command_line = command_line(args);
  s.reduce = std::get<ReduceOptions>(std::move(ro));
  s.resume = vm.count("resume") > 0;
  s.allow_model_independent = vm.count("allow-model-independent") > 0;
  const long long runs = vm["max-engine-runs"].as<long long>();
  if (runs < 0) {
    std::cerr << "error: --max-engine-runs: must be 0 (no limit) or a positive number of runs, not " << runs << "\n";
    return kExitUsage;
  }
  s.max_engine_runs = static_cast<uint64_t>(runs);
  // Engine runs are the cost (a TensorRT build each): simplifications are extras, asked for
  // (bench/RESULTS.md: the one run a budget of 1 gave them was wasted on 6 of 9 corpus
  // families); passes a user names are run as asked.
  const bool simplify_default = vm["simplify-runs"].defaulted();
  if (const std::string simplify = vm["simplify-runs"].as<std::string>();
      simplify != "all" && !(simplify_default && vm.count("passes"))) {
    size_t n = 0;
    const auto [end, ec] = std::from_chars(simplify.data(), simplify.data() + simplify.size(), n);
    if (ec != std::errc() || end != simplify.data() + simplify.size()) {
      std::cerr << "error: --simplify-runs: a number of engine runs (0 or more) or `all`, not '" << simplify << "'\n";
      return kExitUsage;
    }
    s.reduce.simplify_runs = n;
  }
  const std::string format = vm["save-format"].as<std::string>();
  if (format != "pb" && format != "polygraphy") {
    std::cerr << "error: --save-format: a bundle is pb or polygraphy, not '" << format << "'\n";
    return kExitUsage;
  }
  s.bundle.polygraphy = format == "polygraphy";
  if (vm.count("confirm")) {
    s.bundle.confirm = vm["confirm"].as<int>();
    if (Status st = check_int_range("--confirm", s.bundle.confirm, 1, kMaxConfirm); !st.ok()) {
      std::cerr << "error: " << st.error().message() << "\n";
      return kExitUsage;
    }
  }
  parsed.flatten.inline_if = !vm.count("no-inline-if");
  parsed.flatten.unroll_loops = !vm.count("no-unroll-loops");
  const uint64_t budget = vm["max-unrolled-nodes"].as<uint64_t>();
  if (budget < 1 || budget > kMaxUnrolledNodes) {
    std::cerr << "error: --max-unrolled-nodes: " << budget << " is outside 1.." << kMaxUnrolledNodes << "\n";
    return kExitUsage;
  }
  parsed.flatten.max_unrolled_nodes = static_cast<size_t>(budget);
  parsed.rank_timeout = vm["rank-timeout"].as<double>();
  if (Status t = cluster::check_rank_timeout(parsed.rank_timeout); !t.ok()) {
    std::cerr << "error: " << t.error().message() << "\n";
    return kExitUsage;
  }
  // -o is checked before any work: a refused folder is never touched.
  if (Status folder = check_bundle_folder(s.out_dir, s.model_path, s.resume); !folder.ok()) {
    std::cerr << "error: " << folder.error().message() << "\n";
    return kExitUsage;
  }
  return parsed;
}

std::string reduce_options_given(const po::variables_map& vm, const std::vector<std::string>& skip) {
  const po::options_description known = reduce_options();
  const auto number = [](double v) {  // the shortest text that reads back as the same double
    char text[64];
    const auto end = std::to_chars(text, text + sizeof text, v).ptr;
    return std::string(text, end);
  };
  std::string out;
  for (const auto& [name, value] : vm) {
    if (value.defaulted() || std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    const po::option_description* option = known.find_nothrow(name, false);
    if (!option) continue;  // this command's own (--confirm, --diagnose)
    const boost::any& a = value.value();
    std::vector<std::string> words;
    if (a.empty()) words = {};
    else if (const auto* s = boost::any_cast<std::string>(&a)) words = {*s};
    else if (const auto* v = boost::any_cast<std::vector<std::string>>(&a)) words = *v;
    else if (const auto* d = boost::any_cast<double>(&a)) words = {number(*d)};
    else if (const auto* i = boost::any_cast<int>(&a)) words = {std::to_string(*i)};
    else if (const auto* u = boost::any_cast<uint64_t>(&a)) words = {std::to_string(*u)};
    else if (const auto* is = boost::any_cast<std::vector<int>>(&a))
      for (int x : *is) words.push_back(std::to_string(x));
    else if (boost::any_cast<bool>(&a)) words = {};
    else continue;  // a type no option of reduce's has: left out rather than guessed
    // One flag with every value where the option takes several, else the flag once per value.
    const bool several = option->semantic()->max_tokens() > 1;
    if (words.empty()) {
      out += " --" + name;
      continue;
    }
    if (several) {
      out += " --" + name;
      for (const auto& w : words) out += " " + shell_word(w);
    } else {
      for (const auto& w : words) out += " --" + name + " " + shell_word(w);
    }
  }
  return out;
}

}  // namespace reduce::cli
