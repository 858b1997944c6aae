// reduce_model: shrinks a model's failing candidate with graph-aware delta debugging, in parallel,
// with a result that does not depend on the number of jobs.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/status.h"
#include "reducer/candidate.h"

namespace reduce {

// A snapshot for progress displays, sent after every finished check and every pass change.
struct ReduceProgress {
  size_t size = 0;        // nodes of the best candidate, not counting Constant nodes
  size_t start_size = 0;  // nodes of the candidate the search started from (the model, or --resume's)
  size_t checks = 0;      // verdicts obtained (cache hits included)
  size_t cache_hits = 0;  // verdicts answered from a cache (the reducer's or the test's)
  double rate = 0;        // checks per second
  double elapsed = 0;     // seconds since the reduction started
  std::string pass;       // the pass or strategy step running
};

// Which passes of the default strategy run: one flag per entry of reduce_passes(), in that order.
// Made from names once by select_passes; every pass by default.
class PassSelection {
 public:
  PassSelection();  // every pass
  bool runs(size_t pass) const { return runs_.at(pass); }  // `pass`: an index into reduce_passes()
  size_t count() const;                                     // passes that run

 private:
  friend Expected<PassSelection> select_passes(const std::vector<std::string>&, const std::vector<std::string>&);
  std::vector<bool> runs_;
};

// The passes named in `passes` (empty: every pass) minus those in `skip_passes`. An unknown name
// is an error: "unknown pass 'NAME' (see --print-passes)".
Expected<PassSelection> select_passes(const std::vector<std::string>& passes,
                                      const std::vector<std::string>& skip_passes = {});

struct ReduceOptions {
  int jobs = 1;            // tests in flight
  PassSelection passes;    // default strategy: the passes to run
  // "default", "polygraphy-bisect", "polygraphy-linear", "ddmin" or "precision" (see
  // reduce_strategies()). "precision" minimizes a set of nodes that is not a subgraph (the nodes an
  // engine keeps in FP32: the test decides what the set means): the shortest interesting prefix of
  // `ranking`, then node-removal and certify, in rounds; its result is 1-minimal.
  std::string strategy = "default";
  // For "precision": nodes in the order they are likely needed (e.g. the most error added first).
  std::vector<size_t> ranking;
  std::function<void(const ReduceProgress&)> on_progress;
  // Called with each new best candidate, in commit order, from the thread that called reduce_model,
  // with the engine runs the simplification passes had spent by then (for --resume).
  std::function<void(const Candidate&, size_t simplify_runs)> on_improvement;
  // Called on the reducing thread when certify starts on the real path, with the candidate it
  // certifies and the rounds so far (ReduceResult::rounds): unless one of its single removals goes,
  // that candidate is the result (a session runs it again for the bundle meanwhile).
  std::function<void(const Candidate&, size_t rounds)> on_certify;
  // When set (Ctrl-C), in-flight tests are cancelled and the best candidate so far is returned.
  const std::atomic<bool>* stop = nullptr;
  // Called on the reducing thread when it starts waiting for tests to end (blocked: true, with the
  // number of tests running: started and not yet collected) and when it goes on (blocked: false).
  // A wait that only answers can end is a round trip to the test (tests/reducer/synthetic_test.h
  // counts them exactly with it).
  std::function<void(bool blocked, size_t running)> on_wait;
  // Engine runs the simplification passes (cut-as-constant, shape-reduction, fill-weights,
  // drop-attributes) may spend in one reduction, all together (answers refused as invalid before
  // the engine do not count); nullopt: no limit. Once spent, a running simplification keeps what
  // it accepted and the others do not start: node removal and certification go on.
  std::optional<size_t> simplify_runs;
  // With `start`: the simplification runs spent before it (--resume: the journal's last record).
  size_t simplify_runs_spent = 0;
  // Continue from this candidate (assumed interesting) instead of the whole model (--resume).
  std::optional<Candidate> start;
  bool verbose = false;                   // log every check
  std::function<void(std::string)> log;  // one line per call, no trailing newline
};

struct PassStats {
  std::string name;
  size_t checks = 0;     // verdicts obtained while the pass ran
  size_t successes = 0;  // commits it made
  double seconds = 0;
};

struct ReduceResult {
  Candidate best;
  // No single remaining node can be removed, top-level or inside a kept body (a certification
  // sweep said so).
  bool one_minimal = false;
  size_t body_nodes = 0;  // nodes left inside the bodies of the best candidate's nodes (units too)
  size_t checks = 0;
  size_t cache_hits = 0;
  // The longest chain of checks in which each waited for an earlier verdict (one it needed, or one
  // that freed its slot): the wall time in test latencies when every test takes as long (-j 1: the
  // engine runs). Cache hits and candidates refused before the engine add none. At -j > 1 which
  // speculative tests run depends on which answers come in first, so it can move by a round
  // between runs (docs/reducer.md, "Rounds").
  size_t rounds = 0;
  size_t slipped = 0;  // candidates that failed differently
  size_t invalid = 0;  // candidates the test refused as not runnable
  double seconds = 0;
  std::vector<PassStats> passes;  // in pass-list order, for passes (or strategy steps) that ran
  bool stopped = false;           // ended by the stop flag
  // Engine runs the simplification passes spent, and whether ReduceOptions::simplify_runs stopped one.
  size_t simplify_runs = 0;
  bool simplify_budget_reached = false;
};

// A pass of the default strategy, as listed in reducer/src/passes/passes.def.
struct PassInfo {
  const char* name;
  const char* help;
  bool simplifies = false;  // edits without removing nodes: bounded by ReduceOptions::simplify_runs
};
const std::vector<PassInfo>& reduce_passes();
// The strategy names reduce_model accepts, the default first (reducer/src/strategies/strategies.def).
const std::vector<std::string>& reduce_strategies();
struct StrategyInfo {
  std::string name;
  bool offered = true;  // `reduce --strategy` takes it (false: a command's own, e.g. precision)
  std::string help;
};
const std::vector<StrategyInfo>& reduce_strategy_list();
// "default, polygraphy-bisect, ...": the offered names, for help texts and errors.
std::string offered_strategies();

// Number of nodes of a candidate as users count them (Constant nodes excluded).
size_t candidate_size(const Model& model, const Candidate& candidate);

// Reduces `model`, whose whole-model candidate (all nodes, default outputs) or `options.start`
// is assumed interesting. Fails for an unknown strategy name, an unindexable graph, or an
// invalid start candidate; otherwise returns the smallest interesting candidate found.
Expected<ReduceResult> reduce_model(const Model& model, CandidateTest& test, const ReduceOptions& options);

}  // namespace reduce
