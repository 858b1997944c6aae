// `reduce batch DIR|MANIFEST -o OUT`: reduces every model (engine spec per model from a manifest),
// skips models already reduced, groups reproducers into buckets of the same failure and writes
// OUT/summary.md and OUT/summary.json. Each model is reduced in its own process: a model that does
// not fail, is invalid, or crashes the engine or the reduction itself ends its own row only.
#include <boost/program_options.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <variant>

#include "adapters/engine_spec.h"
#include "batch/attempts.h"
#include "batch/manifest.h"
#include "batch/order.h"
#include "batch/summary.h"
#include "cluster/mpi_job.h"
#include "cluster/mpi_launch.h"
#include "command.h"
#include "batch_run.h"
#include "command_line.h"
#include "core/mapped_file.h"
#include "adapters/process.h"
#include "oracle_options.h"
#include "reduce_arguments.h"
#include "core/bundle_lock.h"
#include "stop_on_signal.h"
#include "core/progress_estimate.h"

namespace reduce::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;

// The reduction of one model, as `reduce MODEL --engine E -o DIR -j N [reduce options]` would run
// it, in a process of its own: a model that crashes, aborts or exhausts the reduction process ends
// its own row only. Its progress goes to our stderr as it comes. A stop request reaches it as
// SIGTERM (it writes its bundle and exits 130), then SIGKILL after a grace period. In an MPI job
// the reduction runs alone on its rank (a job of one), and only rank 0's shows its progress.
std::vector<std::string> reduce_arguments_of(const BatchItem& item, const fs::path& dir, const po::variables_map& vm,
                                             bool resume) {
  std::vector<std::string> args{item.model.string(), "--engine", item.engine, "-o", dir.string(), "-j",
                                std::to_string(vm["jobs"].as<int>())};
  if (!item.reference.empty()) args.insert(args.end(), {"--reference", item.reference});
  // An ONNX test case: its data set gives the inputs and the expected outputs.
  if (!item.data.empty()) args.insert(args.end(), {"--inputs", item.data.string(), "--expected", item.data.string()});
  if (resume) args.push_back("--resume");
  for (const auto& level : output_level_arguments(vm)) args.push_back(level);
  if (vm.count("reduce-option"))
    for (const auto& extra : vm["reduce-option"].as<std::vector<std::string>>()) args.push_back(extra);
  return args;
}

namespace {

po::options_description batch_options() {
  po::options_description opts(
      "usage: reduce batch DIR|MANIFEST -o OUT [options]\n"
      "       reduce batch DIR --engine ort@A,ort@B,... -o OUT [options]\n\n"
      "Reduces every model of a manifest (tab-separated, with 'model' and 'engine' columns, as written\n"
      "by reduce-corpus) or of a folder (its manifest.tsv, else every .onnx and every ONNX test case\n"
      "NAME/model.onnx, whose test_data_set_0/ gives the inputs and expected outputs, with --engine) into\n"
      "OUT/<model-stem>/ (<model-stem>-2, ... for later rows with the same stem). Models whose bundle is complete are skipped, so an interrupted batch resumes:\n"
      "an interrupted row goes on from its journal, and rows that ended not confirmed, model-independent or without\n"
      "failure keep their status (--retry reduces them again). Exit 0 when every row has a reproducer or no failure, 1\n"
      "when a row failed (an error, not confirmed, model-independent), 130 when interrupted.\n"
      "Reproducers of the same failure and the same reduced graph form one bucket in OUT/summary.md\n"
      "and OUT/summary.json.\n"
      "With a list of releases (a release scan): every model checked on every release (-j models at a\n"
      "time), classed (regressed, failure changed, fixed, support removed or added, fails, passes,\n"
      "cannot take), each change of behaviour reduced on its failing release against its passing one;\n"
      "OUT/summary.md starts with the classes and their counts. The options of the checks and reductions\n"
      "go in --reduce-option (tolerances, --fail-regex, --reference, --timeout). Resumes from OUT/releases/.\n"
      "Exit 1 when a model fails on a release or a reduction ended without a reproducer, 0 otherwise.\n\noptions");
  opts.add_options()("help,h", "show this help")("source", po::value<std::string>(), "manifest file or folder")
      ("output,o", po::value<std::string>(), "output folder")
      ("engine", po::value<std::string>(),
       "engine spec for models without one (folders without a manifest), of one of the kinds below")
      ("retry", "reduce again the rows an earlier run left not confirmed, model-independent or without failure")
      ("jobs,j", po::value<int>()->default_value(0),
       "checks in flight per reduction, and models checked at a time by a release scan (0: the number of cores; at most 1024)")
      ("reduce-option", po::value<std::vector<std::string>>()->multitoken(),
       "extra option passed to each reduction (e.g. --reduce-option=--timeout=60)")
      ("rank-timeout", po::value<double>()->default_value(30),
       "under mpirun or srun: seconds a rank may stay silent before rank 0 drops it (its model is tried once "
       "more on another rank), or rank 0 before the other ranks stop (0.1..3600)");
  add_output_options(opts, "each reduction's line per check and per engine run (its -v); -q: no row lines, each "
                           "reduction's -q");
  opts.add(engine_kinds_group());
  return opts;
}

// The row's status, and what the reduction printed (`output`).
std::string reduce_one(const BatchRow& row, const fs::path& dir, const po::variables_map& vm, const cluster::MpiLaunch& launch,
                       std::stop_token stop, std::string& output) {
  const BatchItem& item = row.item;
  const std::vector<std::string> args = reduce_arguments_of(item, dir, vm, row.resume);
  // Usage errors are found here, without starting a process.
  const auto parsed = parse_reduce_arguments(args);
  if (const int* usage = std::get_if<int>(&parsed)) return "error (exit " + std::to_string(*usage) + ")";
  std::vector<std::string> argv{"/proc/self/exe"};
  argv.insert(argv.end(), args.begin(), args.end());
  CancelOnStop cancel(std::move(stop));
  ProcessOptions options;
  options.cancel = cancel.flag();
  options.terminate_on_cancel = true;
  options.kill_grace_seconds = 1.5;  // Ctrl-C ends a batch within 2 s
  // Seen live (not with -q: the batch's answer is its summary), and its "failure:" line read after.
  options.echo_output = launch.rank == 0 && !console_from(vm).quiet();
  if (launch.under_mpi) options.env = {"OMPI_COMM_WORLD_SIZE=1"};
  auto ran = run_process(argv, options);
  if (!ran) return "error (" + ran.error().message() + ")";
  output = ran->output;
  if (ran->signal != 0 && !ran->cancelled) return "error (" + ran->describe(options) + ")";
  const int code = ran->exit_code;
  if (ran->cancelled || code == kExitInterrupted) return "interrupted";
  if (code == kExitDoesNotFail) return "no failure";
  if (code == kExitNotConfirmed) return "not confirmed (flaky)";
  if (code == kExitModelIndependent) return "model-independent (fails on every probe model)";
  // A reproducer whose error is FP16 rounding is a bundle too (its report says so).
  if (code != 0 && code != kExitRounding) return "error (exit " + std::to_string(code) + ")";
  return "reduced";
}

}  // namespace

// Reduces the models not reduced yet, in their order (batch/order.h; in an MPI job one rank each,
// each try in a folder of its own), until all are done or `stop` is requested. Other ranks than 0
// get their exit code once there is nothing left.
std::variant<int, std::vector<BatchRow>> run_batch(const std::vector<BatchItem>& items, const fs::path& out,
                                                   const po::variables_map& vm, std::stop_token stop, int& ranks_lost) {
  const cluster::MpiLaunch launch = cluster::mpi_launch_from_environment();
  const bool shared = cluster::job_plan(launch) == cluster::JobPlan::Join;
  std::vector<BatchRow> rows = batch_rows(items, out, vm.count("retry") > 0);
  const std::vector<size_t> todo = reduction_order(rows, shared);
  auto bundle = [&](size_t i) { return out / items[i].folder; };
  std::vector<std::string> outputs(items.size());
  const auto started = std::chrono::steady_clock::now();
  std::atomic<size_t> ended{0};  // reductions of this run that ended (several at once in an MPI job)
  auto reduce_item = [&](size_t i, const fs::path& dir, std::stop_token gone) {
    if (launch.rank == 0 && !console_from(vm).quiet()) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::cerr << "batch: [" << i + 1 << "/" << items.size() << "] " << items[i].model.string() << " on "
                << items[i].engine << " (" << ended.load() << " of " << todo.size() << " done: "
                << share_and_time_left(ended.load(), todo.size(), elapsed) << ")\n";
    }
    struct Ended {
      std::atomic<size_t>& count;
      ~Ended() { ++count; }
    } on_end{ended};
    // Ctrl-C, or (a worker rank) rank 0 gone: either stops the reduction.
    std::stop_source either;
    std::stop_callback on_stop(stop, [&] { either.request_stop(); });
    std::stop_callback on_gone(gone, [&] { either.request_stop(); });
    return reduce_one(rows[i], dir, vm, launch, either.get_token(), outputs[i]);
  };
  std::vector<std::optional<std::string>> statuses(items.size());
  if (shared) {
    cluster::BatchShare share{todo, [&](size_t i, int attempt) { return make_attempt_folder(bundle(i), attempt).string(); },
                     [&](size_t i, const std::string& place, std::stop_token gone) {
                       return reduce_item(i, place, std::move(gone));
                     },
                     [&](size_t i, const std::string& place, const std::string& status) {
                       return accept_attempt_folder(place, bundle(i), status);
                     }};
    auto spread = cluster::share_batch(items.size(), share, vm["rank-timeout"].as<double>(), print_stderr_line, stop);
    if (const auto* worker = std::get_if<cluster::WorkerRankEnd>(&spread))
      return worker->rank_zero_lost ? kExitRankZeroLost : kExitOk;
    cluster::BatchOutcome& outcome = std::get<cluster::BatchOutcome>(spread);
    statuses = std::move(outcome.statuses);
    for (size_t i : todo) rows[i].lost_ranks = outcome.lost_ranks[i];
    ranks_lost = outcome.ranks_lost;
  } else {
    for (size_t i : todo)
      if (!stop.stop_requested()) statuses[i] = reduce_item(i, bundle(i), {});
  }
  for (size_t i : todo) finish_batch_row(rows[i], statuses[i].value_or("not started"), bundle(i), outputs[i]);
  return rows;
}

namespace {

// OUT's guards (core/bundle_lock.h): no row's bundle folder and no summary replaces a model, and
// one batch at a time writes OUT (rank 0 locks it; each reduction locks its own folder below).
Status claim_batch_output(const std::vector<BatchItem>& items, const fs::path& out, std::optional<BundleLock>& lock) {
  std::vector<fs::path> models;
  for (const BatchItem& item : items) {
    REDUCE_TRY(check_output_spares(out / item.folder, {item.model}, "-o"));
    models.push_back(item.model);
  }
  for (const char* summary : {"summary.md", "summary.json"}) REDUCE_TRY(check_output_spares(out / summary, models, "-o"));
  if (cluster::mpi_launch_from_environment().rank == 0) {
    REDUCE_ASSIGN(BundleLock claimed, BundleLock::acquire(out));
    lock.emplace(std::move(claimed));
    return {};
  }
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return Error{out.string(), "cannot create folder: " + ec.message()};
  return {};
}

}  // namespace

int batch_command(const std::vector<std::string>& args, std::stop_token stop) {
  const po::options_description opts = batch_options();
  po::positional_options_description pos;
  pos.add("source", 1);
  po::variables_map vm;
  if (auto done = parse_command_line(args, "batch", opts, pos, vm, "source", "DIR|MANIFEST")) return *done;
  if (!vm.count("output")) {
    std::cerr << "error: batch: missing -o OUT\n";
    return kExitUsage;
  }
  const cluster::MpiLaunch launch = cluster::mpi_launch_from_environment();
  if (cluster::job_plan(launch) == cluster::JobPlan::Refuse) {
    if (const std::string line = cluster::refusal_line(launch); !line.empty()) print_stderr_line(line);
    return kExitUsage;
  }
  if (Status t = cluster::check_rank_timeout(vm["rank-timeout"].as<double>()); !t.ok()) {
    std::cerr << "error: " << t.error().message() << "\n";
    return kExitUsage;
  }
  if (Status jobs = check_int_range("-j", vm["jobs"].as<int>(), 0, kMaxParallel); !jobs.ok()) {
    std::cerr << "error: " << jobs.error().message() << "\n";
    return kExitUsage;
  }
  const fs::path source = vm["source"].as<std::string>(), out = vm["output"].as<std::string>();
  // One spec for every model, or a list of releases: a bad one (an unknown kind) is the batch's
  // usage error, before any row runs.
  const std::vector<std::string> specs = vm.count("engine") ? split_release_list(vm["engine"].as<std::string>())
                                                            : std::vector<std::string>{};
  for (const std::string& spec : specs)
    if (auto parsed = engine_spec_option("--engine", spec); !parsed) {
      std::cerr << "error: " << parsed.error().message() << "\n";
      return kExitUsage;
    }
  auto items = batch_items(source, vm.count("engine") ? std::optional(vm["engine"].as<std::string>()) : std::nullopt);
  if (!items) {
    std::cerr << "error: " << items.error().message() << "\n";
    return kExitUsage;
  }
  if (items->empty()) {
    std::cerr << "error: " << source.string() << ": no models\n";
    return kExitUsage;
  }
  // A bad --reduce-option is the batch's usage error (its one line printed), not every row's.
  if (vm.count("reduce-option")) {
    BatchItem first = items->front();
    if (specs.size() > 1) first.engine = specs.front();  // a release scan reduces on one release at a time
    const auto parsed = parse_reduce_arguments(reduce_arguments_of(first, out / first.folder, vm));
    if (const int* done = std::get_if<int>(&parsed)) return *done == kExitOk ? kExitUsage : *done;
    if (auto oracle = oracle_options_from(std::get<ReduceArguments>(parsed).vm); !oracle) {
      std::cerr << "error: " << oracle.error().message() << "\n";
      return kExitUsage;
    }
  }
  std::optional<BundleLock> lock;  // held to the end
  if (Status claimed = claim_batch_output(*items, out, lock); !claimed.ok()) {
    std::cerr << "error: " << claimed.error().message() << "\n";
    return kExitUsage;
  }
  if (specs.size() > 1) return batch_releases(*items, specs, out, vm, stop);
  int ranks_lost = 0;
  const auto shared = run_batch(*items, out, vm, stop, ranks_lost);
  if (const int* worker_exit = std::get_if<int>(&shared)) return *worker_exit;  // rank 0 writes the summary
  const std::vector<BatchRow>& rows = std::get<std::vector<BatchRow>>(shared);
  const std::string counts = batch_count_line(rows);
  if (Status s = write_batch_summary(rows, out, ranks_lost); !s.ok()) {
    std::cerr << "error: " << s.error().message() << "\n";
    return kExitUsage;
  }
  std::cout << counts << ", " << batch_buckets(rows).size() << " buckets; summary: " << (out / "summary.md").string() << "\n";
  if (stop.stop_requested()) return kExitInterrupted;
  return std::any_of(rows.begin(), rows.end(), batch_row_failed) ? kExitFailure : kExitOk;
}

}  // namespace reduce::cli
