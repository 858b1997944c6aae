// `reduce MODEL.onnx --engine SPEC`: shrinks a failing model to the smallest model that still shows
// the same failure and writes the reproducer bundle. Exit 0 with a bundle, 3 when the original
// does not fail, 2 for bad usage or input.
#include <boost/program_options.hpp>
#include <unistd.h>

#include <condition_variable>
#include <csignal>
#include <mutex>
#include <iostream>
#include <sstream>
#include <thread>

#include "bundle.h"
#include "command.h"
#include "command_line.h"
#include "input_options.h"
#include "oracle_options.h"
#include "reducer/reducer.h"
#include "verdict_report.h"

namespace reduce::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_interrupt(int) { g_stop.store(true); }

CandidateSpec to_spec(const Candidate& c) {
  return {c.nodes, c.frozen, c.outputs, c.input_shapes, c.filled, c.dropped_attributes};
}
Candidate to_candidate(const CandidateSpec& s) {
  return {s.nodes, s.frozen, s.outputs, s.input_shapes, s.filled, s.dropped_attributes};
}

// The original model's check runs while the reduction already runs its first candidates (with a
// slow engine that saves one engine run of wall time); candidates are judged once it is known.
class TargetGate {
 public:
  void open(bool proceed) {
    std::lock_guard<std::mutex> lock(mutex_);
    state_ = proceed ? State::Open : State::Closed;
    changed_.notify_all();
  }
  // True once the target is set; false when the reduction will not go on or `cancel` is set.
  bool wait(const std::atomic<bool>& cancel) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (state_ == State::Pending && !cancel.load()) changed_.wait_for(lock, std::chrono::milliseconds(20));
    return state_ == State::Open;
  }

 private:
  enum class State { Pending, Open, Closed } state_ = State::Pending;
  std::mutex mutex_;
  std::condition_variable changed_;
};

// The reducer's view of the oracle: same failure = interesting.
class OracleTest : public CandidateTest {
 public:
  OracleTest(Oracle& oracle, TargetGate& gate, bool verbose, const Model& model)
      : oracle_(oracle), gate_(gate), verbose_(verbose), model_(model) {}
  TestResult test(const Candidate& candidate, const std::atomic<bool>& cancel) override {
    if (cancel.load()) return {TestOutcome::Cancelled, false, {}};
    Verdict v = oracle_.evaluate(to_spec(candidate), &cancel);
    TestResult r;
    r.cache_hit = v.cache_hit;
    if (!gate_.wait(cancel)) return {TestOutcome::Cancelled, false, {}};
    if (v.cancelled || cancel.load()) r.outcome = TestOutcome::Cancelled;
    else if (v.invalid) r.outcome = TestOutcome::Invalid;
    else switch (oracle_.classify(v)) {
      case SignatureMatch::Same: r.outcome = TestOutcome::Interesting; break;
      case SignatureMatch::Pass: r.outcome = TestOutcome::Uninteresting; break;
      case SignatureMatch::Different: r.outcome = TestOutcome::Slipped; break;
    }
    if (r.outcome == TestOutcome::Interesting)
      for (const auto& o : v.outputs)
        if (!o.passed) r.failing_outputs.push_back(o.name);
    if (verbose_) {
      std::ostringstream line;
      line << "check: " << candidate_size(model_, candidate) << " nodes -> " << to_string(r.outcome)
           << (r.cache_hit ? " (cached)" : "") << (v.invalid ? " [" + v.invalid_reason + "]" : "")
           << (r.outcome == TestOutcome::Slipped ? " [" + v.signature.to_string() + "]" : "") << "\n";
      std::cerr << line.str();
    }
    return r;
  }

 private:
  Oracle& oracle_;
  TargetGate& gate_;
  bool verbose_;
  const Model& model_;
};

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+") == std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

int reduce_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: reduce MODEL.onnx --engine SPEC [options]\n\n"
      "Shrinks MODEL to the smallest model that still shows the same failure on the engine (same kind,\n"
      "same normalized error message, or a mismatch of comparable size) and writes a bundle: model.onnx,\n"
      "inputs/, expected/, actual/, report.json, report.md, graph.svg, journal.\n"
      "Exit code: 0 bundle written, 3 the model does not fail, 2 bad usage or input.\n\noptions");
  opts.add_options()("help,h", "show this help")("model", po::value<std::string>(), "the failing model")
      ("output,o", po::value<std::string>(), "bundle folder (default: <model-stem>.reduced)")
      ("jobs,j", po::value<int>()->default_value(0), "checks in flight (0: --slots, else the number of cores)")
      ("strategy", po::value<std::string>()->default_value("default"), "default, polygraphy-bisect, polygraphy-linear, ddmin")
      ("passes", po::value<std::string>(), "comma-separated passes to run (default: all; see --print-passes)")
      ("skip-passes", po::value<std::string>(), "comma-separated passes not to run")
      ("print-passes", "list the reduction passes and exit")
      ("resume", "continue from the bundle's journal")
      ("verbose,v", "one line per check");
  add_oracle_options(opts);
  add_input_options(opts);
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (auto done = parse_command_line(args, "reduce", opts, pos, vm)) return *done;
  if (vm.count("print-passes")) {
    for (const auto& p : reduce_passes()) std::cout << p.name << std::string(p.name ? (20 > std::strlen(p.name) ? 20 - std::strlen(p.name) : 1) : 1, ' ') << p.help << "\n";
    return kExitOk;
  }
  if (!vm.count("model")) {
    std::cerr << "error: reduce: missing MODEL (see `reduce --help`)\n";
    return kExitUsage;
  }
  const fs::path model_path = vm["model"].as<std::string>();
  const fs::path out_dir = vm.count("output") ? fs::path(vm["output"].as<std::string>())
                                              : fs::path(model_path.stem().string() + ".reduced");
  auto split_list = [](const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
      if (!item.empty()) out.push_back(item);
    return out;
  };
  ReduceOptions ro;
  ro.jobs = vm["jobs"].as<int>();
  if (ro.jobs < 0) {
    std::cerr << "error: reduce: -j must not be negative\n";
    return kExitUsage;
  }
  // Default: one check per --slots slot when slots are given, else one per core.
  if (ro.jobs == 0 && vm["slots"].as<int>() > 0) ro.jobs = vm["slots"].as<int>();
  if (ro.jobs == 0) ro.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ro.strategy = vm["strategy"].as<std::string>();
  const auto chosen = vm.count("passes") ? split_list(vm["passes"].as<std::string>()) : std::vector<std::string>{};
  const auto skipped = vm.count("skip-passes") ? split_list(vm["skip-passes"].as<std::string>()) : std::vector<std::string>{};
  auto passes = select_passes(chosen, skipped);
  if (!passes) {
    std::cerr << "error: " << (select_passes(chosen).ok() ? "--skip-passes" : "--passes") << ": " << passes.error().message() << "\n";
    return kExitUsage;
  }
  ro.passes = std::move(*passes);
  ro.seed = vm["seed"].as<uint64_t>();
  ro.verbose = vm.count("verbose") > 0;

  Model model;
  auto oracle_or = load_and_create_oracle(vm, model_path, model);
  if (!oracle_or) {
    std::cerr << "error: " << oracle_or.error().message() << "\n";
    return kExitUsage;
  }
  Oracle& oracle = **oracle_or;
  const size_t original_nodes = count_nodes(model.graph);
  std::cerr << "reduce: " << model_path.string() << " (" << original_nodes << " nodes) on " << oracle.options().engine
            << ", reference " << oracle.options().reference << " (recorded in " << format_number(oracle.reference_seconds())
            << " s)\n";
  std::string command = "reduce";
  std::vector<std::string> words{model_path.string()};
  words.insert(words.end(), args.begin() + 1, args.end());
  for (const auto& a : words) {
    command += ' ';
    command += shell_quote(a);
  }

  if (vm.count("resume")) {
    auto start = read_journal(out_dir);
    if (!start) {
      std::cerr << "error: " << start.error().message() << "\n";
      return kExitUsage;
    }
    ro.start = to_candidate(*start);
    std::cerr << "reduce: resuming from " << candidate_size(model, *ro.start) << " nodes\n";
  } else {
    std::error_code ec;
    fs::remove(out_dir / "journal", ec);
  }

  Status write_status;
  ro.on_improvement = [&](const Candidate& c) {
    auto run = oracle.materialize(to_spec(c));
    if (!run) return;
    Status s = write_bundle_model(out_dir, *run);
    if (s.ok()) s = append_journal(out_dir, to_spec(c));
    if (!s.ok() && write_status.ok()) write_status = s;
  };
  const bool tty = isatty(STDERR_FILENO);
  double last_log = -10;
  ro.on_progress = [&](const ReduceProgress& p) {
    if (tty) {
      std::fprintf(stderr, "\r\033[K%zu nodes | %zu checks (%zu cached) | %.1f/s | %.0f s | %s", p.size, p.checks,
                   p.cache_hits, p.rate, p.elapsed, p.pass.c_str());
    } else if (p.elapsed - last_log >= 5) {
      last_log = p.elapsed;
      std::fprintf(stderr, "progress: %zu nodes, %zu checks (%zu cached), %.1f checks/s, %.0f s, %s\n", p.size, p.checks,
                   p.cache_hits, p.rate, p.elapsed, p.pass.c_str());
    }
  };
  std::atomic<bool> quiet{false};  // the reduction is called off: its closing lines mean nothing
  ro.log = [&](std::string line) {
    if (quiet.load()) return;
    std::string out = tty ? "\r\033[K" : "";
    out += line;
    out += '\n';
    std::cerr << out;  // one write: two threads log
  };
  ro.stop = &g_stop;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {}, old_term {};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  // The original's verdict decides whether there is anything to reduce; meanwhile the reducer
  // starts its first checks, which wait for the verdict before they count.
  TargetGate gate;
  Verdict original;
  bool original_fails = false;
  std::thread original_check([&] {
    original = oracle.evaluate({}, &g_stop);
    original_fails = !original.invalid && !original.cancelled && original.signature.fails();
    if (original_fails) {
      oracle.set_target(original.signature);
      ro.log("reduce: failure to keep: " + original.signature.to_string());
    } else {
      quiet.store(true);
      g_stop.store(true);
    }
    gate.open(original_fails);
  });
  OracleTest test(oracle, gate, ro.verbose, model);
  auto result = reduce_model(model, test, ro);
  original_check.join();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (tty) std::cerr << "\r\033[K";
  if (original.cancelled) {
    std::cerr << "reduce: interrupted before the original model's check ended; nothing written\n";
    return 130;
  }
  if (original.invalid) {
    std::cerr << "error: " << model_path.string() << ": " << original.invalid_reason << "\n";
    return kExitUsage;
  }
  if (!original_fails) {
    std::cout << "the model does not fail on " << oracle.options().engine << ": nothing to reduce\n";
    print_verdict(original, std::cout);
    return 3;
  }
  if (!result) {
    std::cerr << "error: " << result.error().at(model_path.string()).message() << "\n";
    return kExitUsage;
  }
  if (!write_status.ok()) {
    std::cerr << "error: " << write_status.error().message() << "\n";
    return kExitUsage;
  }
  ReductionFacts facts;
  facts.model_path = model_path.string();
  facts.command_line = command;
  facts.strategy = ro.strategy;
  facts.original_nodes = original_nodes;
  facts.checks = result->checks;
  facts.cache_hits = result->cache_hits;
  facts.slipped = result->slipped;
  facts.invalid = result->invalid;
  facts.seconds = result->seconds;
  facts.one_minimal = result->one_minimal;
  facts.stopped = result->stopped;
  facts.jobs = ro.jobs;
  for (const auto& p : result->passes) facts.passes.push_back({p.name, p.checks, p.successes, p.seconds});
  Status s = write_bundle(out_dir, oracle, to_spec(result->best), facts);
  if (!s.ok()) {
    std::cerr << "error: " << s.error().message() << "\n";
    return kExitUsage;
  }
  std::cout << "reduced " << original_nodes << " -> " << candidate_size(model, result->best) << " nodes (";
  bool first = true;
  auto run = oracle.materialize(to_spec(result->best));
  if (run)
    for (const auto& [op, n] : op_type_counts(run->model.graph)) std::cout << (first ? "" : ", ") << op << " x" << n, first = false;
  std::cout << ")" << (result->one_minimal ? ", 1-minimal" : "") << (result->stopped ? ", interrupted" : "") << "\n"
            << "failure: " << oracle.target().to_string() << "\n"
            << result->checks << " checks, " << result->cache_hits << " cache hits, " << format_number(result->seconds)
            << " s\nbundle: " << out_dir.string() << "/\n";
  return result->stopped ? 130 : kExitOk;
}

}  // namespace reduce::cli
