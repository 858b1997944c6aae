// A reduction session: reduces one model on one oracle into a bundle folder. It owns its stop flag
// (requested by the caller's stop token, e.g. Ctrl-C, or by itself when the original model does not
// fail), its progress line and its log, so that sessions run one after another (`reduce batch`)
// never see each other's state. `reduce MODEL` calls it; `reduce batch` runs `reduce MODEL` in a
// process of its own per model (a crash ends that row only), and so calls it there.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <stop_token>
#include <string>

#include "oracle/oracle.h"
#include "reducer/reducer.h"
#include "session/bundle.h"
#include "session/remote_checks.h"
#include "report/report.h"

namespace reduce {

struct SessionOptions {
  std::filesystem::path model_path;
  std::filesystem::path out_dir;  // the bundle folder
  std::string command_line;       // recorded in the report (shell-quoted)
  // Search options; the session sets the callbacks, the stop flag and `start` (from the journal).
  ReduceOptions reduce;
  bool resume = false;  // continue from out_dir's journal
  BundleOptions bundle;  // files the bundle holds on request (Polygraphy's)
  InputSamples samples;  // recorded in the report
  ControlFlowReport control_flow;  // what was inlined before (the session fills nodes_in_bodies)
  size_t renamed_nodes = 0;  // nodes renamed on load (make_node_names_unique): reported
  // Other processes that check candidates (MPI ranks); null: every check runs here.
  RemoteChecks* remote = nullptr;
  // Reduce even when the engine fails the same way on every probe model (oracle/model_independence.h):
  // a check that fails on purpose on anything. Otherwise such a failure stops the session
  // (SessionStatus::ModelIndependent) before the search; the probes are not run at all.
  bool allow_model_independent = false;
  // --max-engine-runs: once the engine under test has run this many times (the original's check
  // included; 0: no limit) the search starts no more checks (those in flight finish) and the best
  // reproducer so far is written, not certified 1-minimal (report: engine_run_budget). The bundle's
  // own run of the reproducer still happens: nothing is reported that did not fail again.
  uint64_t max_engine_runs = 0;
};

// Where the session's progress and log lines go.
struct SessionConsole {
  std::ostream* err = nullptr;  // null: silent
  bool tty = false;             // redraw one progress line instead of printing one every 5 s
};

enum class SessionStatus {
  Reduced,            // bundle written (report.interrupted when stopped early)
  DoesNotFail,        // the original passes: nothing to reduce, nothing written
  StoppedBeforeStart,  // stopped before the original's check ended: nothing written
  Failed,             // bad input or a write error (`error`)
  ModelIndependent,   // the engine fails the same way on every probe model (`probes`): nothing written
};

struct SessionOutcome {
  SessionStatus status = SessionStatus::Failed;
  Verdict original;                      // the original model's verdict
  ModelIndependence probes;              // what the probe models showed, when they ran
  std::optional<ReductionReport> report;  // Reduced
  std::optional<Error> error;             // Failed
};

// Runs one reduction to its end. `oracle` must have been created on `model`.
SessionOutcome run_session(Oracle& oracle, const Model& model, const SessionOptions& options,
                           const SessionConsole& console, std::stop_token stop);

}  // namespace reduce
