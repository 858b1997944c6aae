// One reduction from the original's check to the written bundle.
#include "session/session.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "early_rerun.h"
#include "oracle_checks.h"
#include "session/bundle.h"
#include "session/journal.h"
#include "report/report.h"
#include "oracle/verdict_report.h"
#include "session_log.h"

namespace reduce {

namespace fs = std::filesystem;

namespace {

class Session {
 public:
  Session(Oracle& oracle, const Model& model, const SessionOptions& options, const SessionConsole& console,
          std::stop_token stop)
      : oracle_(oracle), model_(model), options_(options), log_(console),
        // The caller's stop (Ctrl-C) stops this session; this session's own stop stops only itself.
        on_caller_stop_(std::move(stop), [this] { stop_.store(true); }) {}

  SessionOutcome run();

 private:
  Status prepare_start(ReduceOptions& ro);
  ReduceOptions search_options();
  void check_original();
  void probe_setup(std::vector<Verdict> ran);
  void keep_improvement(const Candidate& c, size_t simplify_runs);
  SessionOutcome write_result(const ReduceResult& result);
  void count_trust(ReductionReport& report) const;
  void start_early_rerun(const Candidate& c, size_t rounds);
  ReductionReport search_report(const ReduceResult& result, uint64_t engine_runs) const;

  Oracle& oracle_;
  const Model& model_;
  const SessionOptions& options_;
  SessionLog log_;
  std::atomic<bool> stop_{false};
  std::stop_callback<std::function<void()>> on_caller_stop_;
  TargetGate gate_;
  Candidate start_;  // where the search starts: the whole model, or the journal's last candidate
  ReductionIdentity identity_;  // what every journal record says it belongs to
  Verdict original_;
  bool original_fails_ = false;
  ModelIndependence probes_;
  bool model_independent_ = false;
  size_t gate_rounds_ = 0;  // the original's check and the probes after it (TargetGate::open)
  Status write_status_;  // the first failed write of a best-so-far model
  EngineRunBudget budget_;
  EarlyRerun early_rerun_{oracle_};  // the bundle's first run, beside certify (several slots)
  TrustEvidence evidence_;  // signs that the engine does not answer as a function of the model
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::mutex stamps_mutex_;
  std::vector<JournalStamp> stamps_;  // each candidate written, in order
  JournalStamp stamp(const Candidate& c, size_t simplify_runs);
};

// The bundle folder holds a reduction that stopped before its end (bucket.txt, the last file of a
// bundle, missing or not complete).
bool interrupted_bundle(const fs::path& dir) {
  const auto bucket = read_bucket(dir);
  return !bucket || !bucket->complete;
}

// The rounds a verdict took: its engine runs, one after another (none when cached or refused).
size_t rounds_of(const Verdict& v) { return v.cache_hit || v.invalid || v.cancelled ? 0 : static_cast<size_t>(std::max(1, v.runs)); }

SessionOutcome failed(Error error) {
  SessionOutcome o;
  o.status = SessionStatus::Failed;
  o.error = std::move(error);
  return o;
}

// --resume starts from the journal's last candidate, when the journal belongs to this reduction;
// otherwise an old journal is removed.
Status Session::prepare_start(ReduceOptions& ro) {
  identity_ = reduction_identity(options_.model_path, oracle_, options_.samples.source);
  if (!options_.resume) {
    std::error_code ec;
    // A reduction of this same model and engine stopped here (its journal, and a bucket.txt that is
    // not complete or none): it starts over, as asked, but the user may have meant to continue it.
    if (interrupted_bundle(options_.out_dir))
      if (auto last = read_journal_entry(options_.out_dir); last && check_journal_identity(options_.out_dir, *last, identity_).ok())
        log_.line("note: " + options_.out_dir.string() + " holds an interrupted reduction of this model (at " +
                  std::to_string(candidate_size(model_, last->candidate)) +
                  " nodes); starting over: pass --resume to continue from it instead");
    fs::remove(options_.out_dir / "journal", ec);
    start_ = Candidate::whole(model_.graph);
    return {};
  }
  REDUCE_ASSIGN(JournalEntry last, read_journal_entry(options_.out_dir));
  REDUCE_TRY(check_journal_identity(options_.out_dir, last, identity_));
  ro.start = last.candidate;
  ro.simplify_runs_spent = last.simplify_runs;
  start_ = *ro.start;
  log_.line("reduce: resuming from " + std::to_string(candidate_size(model_, *ro.start)) + " nodes");
  return {};
}

ReduceOptions Session::search_options() {
  ReduceOptions ro = options_.reduce;
  ro.on_improvement = [this](const Candidate& c, size_t simplify_runs) { keep_improvement(c, simplify_runs); };
  ro.on_progress = [this](const ReduceProgress& p) { log_.progress(p); };
  ro.log = [this](std::string line) { log_.line(line); };
  ro.stop = &stop_;
  // With one slot the bundle's run waits for the search, which then runs nothing beside it.
  if (ro.jobs > 1 && oracle_.options().slots > 1 && !options_.remote)
    ro.on_certify = [this](const Candidate& c, size_t rounds) { start_early_rerun(c, rounds); };
  return ro;
}

JournalStamp Session::stamp(const Candidate& c, size_t simplify_runs) {
  const OracleStatistics stats = oracle_.statistics();
  JournalStamp out{candidate_size(model_, c),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count(),
                   stats.evaluations - stats.invalid, simplify_runs};
  std::lock_guard lock(stamps_mutex_);
  stamps_.push_back(out);
  return out;
}

// Each new best candidate is on disk at once: an interrupted reduction leaves a reproducer.
void Session::keep_improvement(const Candidate& c, size_t simplify_runs) {
  auto run = oracle_.materialize(c);
  if (!run) return;
  Status s = write_bundle_model(options_.out_dir, *run, BundleWeights::LinkOriginal);
  if (s.ok()) s = append_journal(options_.out_dir, identity_, c, stamp(c, simplify_runs));
  if (!s.ok() && write_status_.ok()) write_status_ = s;
}

// The original's verdict decides whether there is anything to reduce; meanwhile the reducer starts
// its first checks, which wait for the verdict before they count (and, with an engine in this
// process, before they run: OracleTest).
// With a slot each for the original and the neutral probes, the probes run beside the original's
// check, so that the gate opens one round of engine runs after the start instead of two or three;
// their runs are spent in vain only when the original does not fail.
void Session::check_original() {
  const bool early = !options_.allow_model_independent && oracle_.options().repeat == 1 &&
                     oracle_.options().slots > static_cast<int>(neutral_probes(model_).size());
  std::vector<Verdict> ran;
  std::thread probes;
  if (early) probes = std::thread([&] { ran = run_neutral_probes(oracle_, &stop_); });
  original_ = oracle_.evaluate(Candidate::whole(model_.graph), &stop_);
  if (probes.joinable()) probes.join();
  original_fails_ = original_.fails();
  gate_rounds_ = rounds_of(original_);
  for (const auto& v : ran) gate_rounds_ = std::max(gate_rounds_, rounds_of(v));
  const size_t ran_early = ran.size();
  if (original_fails_) {
    oracle_.target().set(original_.signature);
    log_.line("reduce: failure to keep: " + original_.signature.to_string());
    if (!options_.allow_model_independent) probe_setup(std::move(ran));
    // The probes not run early run one after another, after the original's verdict.
    for (size_t i = ran_early; i < probes_.probes.size(); ++i) gate_rounds_ += rounds_of(probes_.probes[i].verdict);
  }
  if (model_independent_ || probes_.cancelled) {
    log_.silence();
    stop_.store(true);
  } else if (original_fails_) {
    // The journal starts with the start candidate before any improvement can be appended (the
    // gate is still closed): a bundle folder interrupted at any moment from now on can be resumed.
    if (!options_.resume) write_status_ = append_journal(options_.out_dir, identity_, start_, stamp(start_, 0));
  } else {
    log_.silence();
    stop_.store(true);  // calls off this session only
  }
  gate_.open(original_fails_ && !model_independent_ && !probes_.cancelled, gate_rounds_);
}

// Probe models that share nothing with the model tell a failure of the engine's setup from one of
// the model; mixed evidence is said, and the search goes on.
void Session::probe_setup(std::vector<Verdict> ran) {
  probes_ = probe_model_independence(oracle_, &stop_, std::move(ran));
  const ProbeConclusion c = probes_.conclusion;
  model_independent_ = !probes_.cancelled && (c == ProbeConclusion::ModelIndependent || c == ProbeConclusion::FormatRefused);
  if (probes_.cancelled || model_independent_ || !probes_.any_same()) return;
  log_.line("reduce: warning: a probe model that shares nothing with this one fails the same way (the engine's "
            "setup may play a part); reducing anyway:");
  for (const auto& line : probes_.lines()) log_.line("reduce:   " + line);
}

SessionOutcome Session::run() {
  ReduceOptions ro = search_options();
  if (Status s = prepare_start(ro); !s.ok()) return failed(s.error());
  std::thread original_check([this] { check_original(); });
  budget_.max = options_.max_engine_runs;
  budget_.stop = &stop_;
  OracleTest test(oracle_, gate_, log_, ro.verbose, model_, options_.remote, &budget_, &evidence_);
  auto result = reduce_model(model_, test, ro);
  original_check.join();
  log_.finish();
  SessionOutcome outcome;
  outcome.original = original_;
  outcome.probes = probes_;
  if (original_.cancelled || probes_.cancelled) outcome.status = SessionStatus::StoppedBeforeStart;
  else if (original_.invalid) return failed(Error{options_.model_path.string(), original_.invalid_reason});
  else if (!original_fails_) outcome.status = SessionStatus::DoesNotFail;
  else if (model_independent_) outcome.status = SessionStatus::ModelIndependent;
  else if (!result) return failed(result.error().at(options_.model_path.string()));
  else if (!write_status_.ok()) return failed(write_status_.error());
  else return write_result(*result);
  return outcome;
}

ReductionReport Session::search_report(const ReduceResult& result, uint64_t engine_runs) const {
  ReductionReport r;
  r.model_path = options_.model_path.string();
  r.samples = options_.samples;
  r.control_flow = options_.control_flow;
  r.renamed_nodes = options_.renamed_nodes;
  r.command = options_.command_line;
  r.strategy = options_.reduce.strategy;
  r.jobs = options_.reduce.jobs;
  r.original_nodes = count_nodes(model_.graph);
  r.checks = result.checks;
  r.engine_runs = engine_runs;
  r.rounds = std::max<uint64_t>(result.rounds, gate_rounds_);
  r.cache_hits = result.cache_hits;
  r.slipped = result.slipped;
  r.invalid = result.invalid;
  r.seconds = result.seconds;
  r.one_minimal = result.one_minimal;
  // Stopped by the engine-run budget: a result, not an interruption (still not certified).
  r.engine_run_budget = options_.max_engine_runs;
  r.budget_reached = result.stopped && budget_.reached.load();
  r.interrupted = result.stopped && !r.budget_reached;
  r.passes = result.passes;
  r.simplify_runs_max = options_.reduce.simplify_runs;
  r.simplify_runs = result.simplify_runs;
  r.simplify_budget_reached = result.simplify_budget_reached;
  return r;
}

// What the search's statistics hold besides the search, and the signs that ask for more trust
// runs (confirm_runs_for; the probes again): the bundle adds its own.
void Session::count_trust(ReductionReport& report) const {
  uint64_t probe_runs = 0;
  bool probe_failed = false;
  for (const auto& p : probes_.probes) {
    probe_runs += rounds_of(p.verdict) > 0 ? static_cast<uint64_t>(std::max(1, p.verdict.runs)) : 0;
    probe_failed |= p.verdict.fails();
  }
  report.runs_spent.probes = probe_runs + early_rerun_.discarded_probes();
  report.rounds_spent.probes = gate_rounds_ - std::min(gate_rounds_, rounds_of(original_));
  // Speculative trust runs of candidates that did not stay the result.
  report.runs_spent.confirmation = early_rerun_.discarded() - early_rerun_.discarded_probes();
  report.trust_reasons = evidence_.reasons();
  if (oracle_.options().repeat > 1)
    report.trust_reasons.push_back("--repeat " + std::to_string(oracle_.options().repeat) + " (an engine expected to be flaky)");
  if (probe_failed) report.trust_reasons.push_back("a probe model that shares nothing with this one failed");
}

// The bundle's first fresh run beside certify's last round; for a candidate of 1-2 nodes (which
// always asks for more trust runs: write_bundle) also the other fresh runs and the probe models
// again, when the slots hold them beside certify's own checks: no round of waiting after the search.
void Session::start_early_rerun(const Candidate& c, size_t rounds) {
  const size_t nodes = candidate_size(model_, c);
  const size_t probes = neutral_probes(model_).size();
  const bool tiny = nodes <= ReductionReport::kSetupSuspectNodes && options_.bundle.confirm == 0 && oracle_.options().repeat == 1 &&
                    probes_.conclusion == ProbeConclusion::ModelDependent;
  const bool room = static_cast<size_t>(oracle_.options().slots) >= nodes + kTinyConfirmRuns + probes;
  if (tiny && room) early_rerun_.start(c, rounds, kTinyConfirmRuns - 1, true);
  else early_rerun_.start(c, rounds);
}

SessionOutcome Session::write_result(const ReduceResult& result) {
  // Runs that reached the engine: evaluations not answered from the cache and not refused before
  // the engine (materialize, ONNX checker); counted before the bundle's own run of the reproducer.
  std::optional<FreshRun> first = early_rerun_.take(result.best);  // counted in the statistics
  const OracleStatistics stats = oracle_.statistics();
  ReductionReport report = search_report(result, stats.evaluations - stats.invalid);
  report.probes = probes_;
  count_trust(report);
  report.repeat = oracle_.options().repeat;
  report.flaky = stats.flaky;
  report.refused_by_checker = stats.refused_by_checker;
  if (const auto& ledger = oracle_.options().environment.ledger) report.peak_held_bytes = ledger->peak();
  report.engine_seconds = stats.engine_seconds;
  report.search_work_nodes = stats.work_nodes;
  {
    // Time to a first small reproducer: the first one written within twice the final size.
    const size_t final_nodes = candidate_size(model_, result.best);
    std::lock_guard lock(stamps_mutex_);
    for (const auto& s : stamps_)
      if (s.nodes <= 2 * final_nodes) {
        report.first_small = ReductionReport::FirstSmall{s.nodes, s.seconds, s.engine_runs};
        break;
      }
  }
  report.slots = oracle_.options().slots;
  if (options_.remote) {
    report.ranks = options_.remote->ranks();
    report.slots = options_.remote->slots();
    report.ranks_lost = options_.remote->lost();
    report.remote_checks = options_.remote->answered();
  }
  report.recorded_in_memory_bytes = oracle_.recorded().bytes_in_memory();
  report.recorded_spilled_bytes = oracle_.recorded().bytes_spilled();
  if (Status s = write_bundle(options_.out_dir, oracle_, result.best, report, &stop_, options_.bundle, std::move(first));
      !s.ok())
    return failed(s.error());
  SessionOutcome outcome;
  outcome.status = SessionStatus::Reduced;
  outcome.original = original_;
  outcome.report = std::move(report);
  return outcome;
}

}  // namespace

SessionOutcome run_session(Oracle& oracle, const Model& model, const SessionOptions& options,
                           const SessionConsole& console, std::stop_token stop) {
  return Session(oracle, model, options, console, std::move(stop)).run();
}

}  // namespace reduce
