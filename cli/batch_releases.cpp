// `reduce batch DIR --engine ort@A,ort@B,... -o OUT`: a release scan over a folder of models. Each
// release's engine is made once (its workers stay for every model), -j models are checked at a time,
// each row is kept in OUT/releases/ as it ends, and the changes of behaviour are reduced by batch.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <thread>

#include "batch/release_rows.h"
#include "batch_run.h"
#include "command.h"
#include "command_line.h"
#include "oracle_options.h"
#include "reduce_arguments.h"
#include "stop_on_signal.h"
#include "core/progress_estimate.h"

namespace reduce::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

// The options a model's checks take: the reductions' (--reduce-option), with its data set as its
// inputs and expected outputs. The engine under test is only named: each release is the scan's.
std::variant<po::variables_map, int> check_options_of(const BatchItem& item, const po::variables_map& vm) {
  std::vector<std::string> args{item.model.string(), "--engine", "ref"};
  for (const auto& level : output_level_arguments(vm)) args.push_back(level);
  if (!item.data.empty()) args.insert(args.end(), {"--inputs", item.data.string(), "--expected", item.data.string()});
  if (vm.count("reduce-option"))
    for (const auto& extra : vm["reduce-option"].as<std::vector<std::string>>()) args.push_back(extra);
  return parse_reduce_options(args);
}

// One model on every release: its row (an error row when it cannot be checked), or nullopt when
// the scan was stopped before it ended (it is scanned again on resume).
std::optional<ReleaseRow> scan_model(const BatchItem& item, const po::variables_map& vm, const std::vector<ReleaseEngine>& releases,
                                     std::stop_token stop, const std::atomic<bool>* cancel) {
  ReleaseRow row{item, {}, {}, {}};
  auto options = check_options_of(item, vm);
  if (const int* code = std::get_if<int>(&options)) {
    row.error = "its options cannot be parsed (exit " + std::to_string(*code) + ")";
    return row;
  }
  Model model;  // outlives the oracle
  auto samples = load_and_create_oracles(std::get<po::variables_map>(options), item.model, model, SampleUse::CheckAll, stop);
  if (stop.stop_requested()) return std::nullopt;
  if (!samples) {
    row.error = samples.error().message();
    return row;
  }
  row.scan = scan_releases(samples->main(), releases, cancel);
  if (stop.stop_requested()) return std::nullopt;
  return row;
}

}  // namespace

int batch_releases(const std::vector<BatchItem>& items, const std::vector<std::string>& specs, const fs::path& out,
                   const po::variables_map& vm, std::stop_token stop) {
  const CancelOnStop cancel(stop);
  // The releases' engines, made once, with the environment (threads, timeout) the checks' options give.
  auto first = check_options_of(items.front(), vm);
  if (const int* code = std::get_if<int>(&first)) return *code == kExitOk ? kExitUsage : *code;
  auto base = oracle_options_from(std::get<po::variables_map>(first));
  if (!base) {
    std::cerr << "error: " << base.error().message() << "\n";
    return kExitUsage;
  }
  std::vector<ReleaseRow> rows(items.size());
  std::vector<size_t> todo;
  for (size_t i = 0; i < items.size(); ++i) {
    if (auto kept = read_release_row(out, items[i], specs)) rows[i] = std::move(*kept);
    else todo.push_back(i);
  }
  const Console console = console_from(vm);
  console.line("batch: " + std::to_string(items.size()) + " models on " + std::to_string(specs.size()) + " releases (" +
               std::to_string(items.size() - todo.size()) + " scanned before)");
  std::vector<ReleaseEngine> releases;
  if (!todo.empty()) {
    releases = make_release_engines(specs, base->environment);
    for (const auto& r : releases)
      if (!r.engine) console.note(r.spec + ": not run: " + r.not_run);
  }
  int jobs = vm["jobs"].as<int>();
  if (jobs == 0) jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  jobs = std::min<int>(jobs, static_cast<int>(std::max<size_t>(todo.size(), 1)));
  std::atomic<size_t> next{0};
  size_t ended = 0;  // under `said`
  std::mutex said;
  const auto started = std::chrono::steady_clock::now();
  auto work = [&] {
    for (size_t k; !stop.stop_requested() && (k = next++) < todo.size();) {
      const size_t i = todo[k];
      auto row = scan_model(items[i], vm, releases, stop, cancel.flag());
      if (!row) return;
      if (Status kept = write_release_row(out, *row); !kept.ok()) {
        std::lock_guard lock(said);
        std::cerr << "warning: " << kept.error().message() << " (the row is scanned again on resume)\n";
      }
      rows[i] = std::move(*row);
      std::lock_guard lock(said);
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      ++ended;
      console.line("batch: [" + std::to_string(ended) + "/" + std::to_string(todo.size()) + "] " + items[i].folder + ": " +
                   rows[i].row_class() + " (" + share_and_time_left(ended, todo.size(), elapsed) + ")");
    }
  };
  {
    std::vector<std::jthread> threads;
    for (int t = 1; t < jobs; ++t) threads.emplace_back(work);
    work();
  }
  releases.clear();  // the workers end before the reductions start theirs
  if (stop.stop_requested()) return kExitInterrupted;
  // Every change of behaviour reduced on its failing release against its passing one, as printed.
  std::vector<BatchItem> reductions;
  for (ReleaseRow& row : rows) {
    std::string options;
    if (auto parsed = check_options_of(row.item, vm); std::holds_alternative<po::variables_map>(parsed))
      options = reduce_options_given(std::get<po::variables_map>(parsed), {"engine", "reference", "model", "output"});
    plan_release_reductions(row, out, options);
    for (const auto& r : row.reductions) reductions.push_back(r.item);
  }
  bool reduction_failed = false;
  if (!reductions.empty()) {
    int ranks_lost = 0;
    const auto reduced = run_batch(reductions, out, vm, stop, ranks_lost);
    if (const int* worker_exit = std::get_if<int>(&reduced)) return *worker_exit;
    const auto& done = std::get<std::vector<BatchRow>>(reduced);
    size_t k = 0;
    for (ReleaseRow& row : rows)
      for (auto& r : row.reductions) {
        r.status = done[k].status;
        r.bucket = done[k].bucket;
        reduction_failed |= batch_row_failed(done[k]);
        ++k;
      }
  }
  if (Status s = write_release_summary(rows, specs, out); !s.ok()) {
    std::cerr << "error: " << s.error().message() << "\n";
    return kExitUsage;
  }
  std::cout << release_count_line(rows) << "; " << reductions.size() << " reductions; summary: " << (out / "summary.md").string() << "\n";
  if (stop.stop_requested()) return kExitInterrupted;
  const bool fails = std::any_of(rows.begin(), rows.end(), [](const ReleaseRow& row) {
    return std::any_of(row.scan.begin(), row.scan.end(), [](const ReleaseVerdict& r) { return r.fails(); });
  });
  return fails || reduction_failed ? kExitFailure : kExitOk;
}

}  // namespace reduce::cli
