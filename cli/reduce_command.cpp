// `reduce MODEL.onnx --engine SPEC`: shrinks a failing model to the smallest model that still shows
// the same failure and writes the reproducer bundle. Exit 0 with a bundle, 3 when the original
// does not fail, 6 when the reproducer does not fail again, 7 when every probe model fails the same
// way, 2 for bad usage or input, 130 when interrupted. Parses, runs a reduction session
// (session/), prints its outcome.
#include <unistd.h>

#include <iostream>
#include <optional>

#include "cluster/mpi_job.h"
#include "cluster/mpi_launch.h"
#include "command.h"
#include "command_line.h"
#include "oracle_options.h"
#include "reduce_arguments.h"
#include "adapters/script_words.h"
#include "core/bundle_lock.h"
#include "session/control_flow.h"
#include "oracle/verdict_report.h"
#include "stop_on_signal.h"

namespace reduce::cli {

namespace {

void print_start(const SessionOptions& s, const Model& model, const SampleOracles& samples, const Console& console) {
  if (console.quiet()) return;
  const Oracle& oracle = samples.main();
  std::cerr << "reduce: " << s.model_path.string() << " (" << count_nodes(model.graph) << " nodes) on "
            << oracle.options().engine << ", reference " << oracle.options().reference << " (recorded in "
            << format_number(oracle.recording().seconds) << " s)\n";
  if (const std::string& note = oracle.recording().refusal_note; !note.empty()) console.note(note);
  print_samples(samples, std::cerr);
  print_random_inputs_note(samples, std::cerr);
}

void print_reduced(const ReductionReport& r, const SessionOptions& s) {
  std::cout << "reduced " << r.original_nodes << " -> " << r.reduced_nodes << " nodes (";
  bool first = true;
  for (const auto& [op, n] : r.reduced_op_types) std::cout << (first ? "" : ", ") << op << " x" << n, first = false;
  std::cout << ")" << (r.one_minimal ? ", 1-minimal" : "") << (r.interrupted ? ", interrupted" : "")
            << (r.budget_reached ? ", engine-run budget of " + std::to_string(r.engine_run_budget) +
                                       " reached (not certified 1-minimal)"
                                 : std::string())
            << "\n"
            << (!r.simplify_budget_reached ? std::string()
                : *r.simplify_runs_max == 0
                    ? "not simplified (--simplify-runs 0, the default: engine runs go to the node set; `--simplify-runs all` "
                      "freezes cut values, shrinks shapes, fills weights and drops attributes)\n"
                    : "simplification stopped after " + std::to_string(r.simplify_runs) + " engine run(s) (--simplify-runs " +
                          std::to_string(*r.simplify_runs_max) + "; `all` simplifies weights, shapes and attributes further)\n")
            << (r.first_small ? "first reproducer within 2x of the final size: " + std::to_string(r.first_small->nodes) +
                                    " nodes after " + std::to_string(r.first_small->engine_runs) + " engine runs\n"
                              : std::string())
            << (r.not_confirmed() ? "NOT CONFIRMED: " : "confirmed: ") << r.confirmed << " of " << r.confirm_runs
            << " fresh run(s) of the reproducer fail the same way"
            << (r.not_confirmed() ? " (a flaky engine, or a failure that does not depend on the model alone)" : "") << "\n"
            << (r.flaky > 0 ? "flaky: " + std::to_string(r.flaky) + " checks gave different verdicts across their " +
                                  std::to_string(r.repeat) + " runs (--repeat); each took the majority\n"
                                  "WARNING: the engine gave two verdicts on one model: a reproducer of a flaky engine may "
                                  "not be real; run `reduce check` on it with --confirm 10\n"
                            : std::string())
            << (r.setup_suspect ? "WARNING: a probe model that shares nothing with the reproducer fails the same way: it may "
                                  "show the engine's setup, not the model (report.md lists the probes)\n"
                                : std::string())
            << "failure: " << r.failure.to_string() << "\n"
            << r.checks << " checks, " << r.cache_hits << " cache hits, "
            << format_number(r.seconds) << " s\nbundle: " << s.out_dir.string() << "/\n";
  const RoundingCheck& rounding = r.rounding;
  if (rounding.explained)
    std::cout << rounding.precision << " ROUNDING: the exact " << rounding.precision << " reference (" << rounding.engine
              << ") fails the same way on the reproducer: the error is what " << rounding.precision
              << " gives on this subgraph, not an engine bug. `reduce precision` finds the nodes to keep in FP32.\n";
  else if (rounding.checked)
    std::cout << "not " << rounding.precision << " rounding alone: " << rounding.engine << " gives "
              << rounding.verdict << " on the reproducer\n";
}

// The engine's setup fails, or its format is refused, not this model's graph: a reduction would end
// at any one node.
void print_model_independent(const SessionOutcome& o) {
  const ModelIndependence& p = o.probes;
  if (p.conclusion == ProbeConclusion::FormatRefused)
    std::cout << "the engine refuses this model's format (" << p.format
              << "): probe models that share no node, name or type with it fail the same way in that format, and "
                 "pass in an older one; nothing to reduce. Convert the model to an opset the engine reads, or use "
                 "an engine release that reads it\n";
  else
    std::cout << "the engine fails the same way on every probe model, models that share no node, name, type or "
                 "shape with this one: the failure does not depend on this model; nothing to reduce. Check the "
                 "engine's command and setup on its own (a refused flag, a missing library, a script that fails "
                 "on anything), or pass --allow-model-independent to reduce anyway\n";
  std::cout << "failure: " << o.original.signature.to_string() << "\n";
  for (const auto& line : p.lines()) std::cout << "probe: " << line << "\n";
  if (!p.probes.empty() && !p.probes.front().verdict.signature.message.empty())
    std::cout << "message: " << shown_message(p.probes.front().verdict.signature.message) << "\n";
}

// Prints the outcome; returns the exit code.
int print_outcome(const SessionOutcome& o, const SessionOptions& s, const Oracle& oracle) {
  switch (o.status) {
    case SessionStatus::StoppedBeforeStart:
      return interrupted(" before the original model's check ended; nothing written");
    case SessionStatus::Failed:
      std::cerr << "error: " << o.error->message() << "\n";
      return kExitUsage;
    case SessionStatus::DoesNotFail:
      std::cout << "the model does not fail on " << oracle.options().engine << ": nothing to reduce\n";
      print_verdict(o.original, std::cout);
      return kExitDoesNotFail;
    case SessionStatus::ModelIndependent:
      print_model_independent(o);
      return kExitModelIndependent;
    case SessionStatus::Reduced:
      print_reduced(*o.report, s);
      if (o.report->interrupted) return kExitInterrupted;
      if (o.report->not_confirmed()) return kExitNotConfirmed;
      return o.report->rounding.explained ? kExitRounding : kExitOk;
  }
  return kExitUsage;
}

// A worker rank's exit code: 0 once rank 0 said stop, 5 when it fell silent.
int serve(cluster::ClusterRole& role, Oracle* oracle, const Model* model, const std::string& error) {
  return role.serve(oracle, model, error) ? kExitOk : kExitRankZeroLost;
}

// Loads the model, builds the oracle, runs the session and prints its outcome; the exit code. In an
// MPI job (`cluster`), worker ranks do the same up to the session, print nothing, and serve checks.
int run_reduction(const ReduceArguments& args, std::stop_token stop, cluster::ClusterRole* cluster) {
  const SessionOptions& s = args.session;
  const bool worker = cluster && cluster->worker();
  // Rank 0 (or the only process) owns the bundle folder from here to the end.
  std::optional<BundleLock> lock;
  if (!worker) {
    auto acquired = BundleLock::acquire(s.out_dir);
    if (!acquired) {
      std::cerr << "error: " << acquired.error().message() << "\n";
      return kExitUsage;
    }
    lock.emplace(std::move(*acquired));
  }
  Model model;
  auto samples = load_and_create_oracles(args.vm, s.model_path, model, SampleUse::FirstFailing, stop);
  if (worker && !samples) return serve(*cluster, nullptr, nullptr, samples.error().message());
  if (stop.stop_requested()) return interrupted("; nothing written");
  if (!samples) {
    std::cerr << "error: " << samples.error().message() << "\n";
    return kExitUsage;
  }
  Oracle& given = samples->main();
  // Worker ranks say nothing; -q says only the answer (stdout) and errors.
  const Console console = worker ? Console(OutputLevel::quiet) : console_from(args.vm);
  print_start(s, model, *samples, console);
  SessionOptions session = s;
  session.samples = {samples->sources.size(), samples->chosen, samples->sources[samples->chosen], samples->failing()};
  session.renamed_nodes = samples->renamed_nodes;
  auto flat = flatten_when_failing(given, args.flatten, [&console](const std::string& line) { console.line(line); }, stop);
  if (worker && !flat) return serve(*cluster, nullptr, nullptr, flat.error().message());
  if (stop.stop_requested()) return interrupted("; nothing written");
  if (!flat) {
    std::cerr << "error: " << s.model_path.string() << ": " << flat.error().message() << "\n";
    return kExitUsage;
  }
  Oracle& oracle = *flat ? *(*flat)->oracle : given;
  const Model& reduced_model = *flat ? *(*flat)->model : model;
  if (worker) return serve(*cluster, &oracle, &reduced_model, "");
  if (*flat) {
    const FlattenedModel& f = **flat;
    session.control_flow = {f.inlined.inlined, f.inlined.body_nodes, count_nodes(model.graph), 0,
                            f.unrolled.unrolled, f.unrolled.iterations, f.unrolled.body_nodes};
  }
  if (cluster) {
    // Every rank checks as many candidates at once as it has slots: the reducer keeps that many in flight.
    session.remote = cluster->join(reduced_model, oracle);
    session.reduce.jobs *= cluster->ranks();
  }
  const SessionConsole progress{console.quiet() ? nullptr : &std::cerr, isatty(STDERR_FILENO) != 0};
  SessionOutcome o = run_session(oracle, reduced_model, session, progress, std::move(stop));
  const int code = print_outcome(o, s, oracle);
  // Stopped (Ctrl-C, a signal): the bundle holds the smallest reproducer so far, and its journal.
  if (o.status == SessionStatus::Reduced && o.report->interrupted)
    std::cerr << "reduce: interrupted; " << s.out_dir.string() << " holds the smallest reproducer so far ("
              << o.report->reduced_nodes << " nodes); continue with: reduce " << shell_word(s.model_path.string())
              << reduce_options_given(args.vm, {"model", "resume"}) << " --resume\n";
  return code;
}

}  // namespace

int reduce_command(const std::vector<std::string>& args, std::stop_token stop) {
  auto parsed = parse_reduce_arguments(args);
  if (const int* code = std::get_if<int>(&parsed)) return *code;
  const ReduceArguments& arguments = std::get<ReduceArguments>(parsed);
  const cluster::MpiLaunch launch = cluster::mpi_launch_from_environment();
  switch (cluster::job_plan(launch)) {
    case cluster::JobPlan::Alone:
      return run_reduction(arguments, std::move(stop), nullptr);
    case cluster::JobPlan::Refuse:
      if (const std::string line = cluster::refusal_line(launch); !line.empty()) print_stderr_line(line);
      return kExitUsage;
    case cluster::JobPlan::Join:
      break;
  }
  return cluster::in_mpi_job(arguments.rank_timeout, print_stderr_line,
                             [&](cluster::ClusterRole* role) { return run_reduction(arguments, stop, role); });
}

}  // namespace reduce::cli
