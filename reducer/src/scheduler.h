// Scheduler: runs a strategy's passes on one reduction. Only real answers move the reduction (the
// path -j 1 takes, whatever -j is); with several jobs, free slots test what the reduction is most
// likely to ask next: the decision tree of every pass ahead (across pass ends and rounds),
// expanded best-first under guessed answers.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "check_runner.h"
#include "pass.h"
#include "reducer/reducer.h"
#include "removal_predictor.h"

namespace reduce::detail {

// A strategy: its passes, in the order a round runs them.
struct Strategy {
  std::vector<Pass> passes;
  bool rounds = false;  // repeat the passes until a whole round commits nothing
  // Running to its end (not stopped) makes the result 1-minimal.
  bool certifies = false;
  // Candidates are subgraphs an engine builds, so they keep Q/DQ pairs whole (ReductionGraph);
  // false when a candidate's nodes mean something else (precision: the nodes kept in FP32).
  bool subgraphs = true;
};

// Where the reduction is on one path of decisions: the pass running (its state), the best
// candidate and the facts the path has reached. Cheap to copy (shared, immutable parts).
struct Path {
  size_t pass = 0;  // the pass running (state set) or to start next (state null)
  size_t round = 1;
  bool round_changed = false;  // a commit that opens another round happened in this round
  size_t simplify_runs = 0;    // answers that reached the engine while a simplification pass ran
  size_t rests_on = 0;         // the longest chain among the answers followed (Wanted::rests_on)
  PassStatePtr state;
  std::shared_ptr<const Candidate> best;
  Facts facts;
};

class Scheduler {
 public:
  Scheduler(const ReductionGraph& g, CandidateTest& test, const ReduceOptions& options, Strategy strategy,
            Candidate start);

  // Runs the passes to their end (or the stop flag). Fails when a test threw.
  Status run();

  const Candidate& best() const { return *real_.best; }
  bool stopped() { return runner_.stopped(); }
  // The strategy ended because a round committed nothing (default), or its passes ended.
  bool finished() const { return finished_; }
  const CheckCounts& counts() const { return runner_.counts(); }
  // The longest chain of verdicts the real path waited for (ReduceResult::rounds).
  size_t rounds() const { return real_.rests_on; }
  size_t malformed() const { return runner_.malformed(); }
  const std::vector<PassStats>& pass_stats() const { return stats_; }
  // Engine runs the simplification passes spent on the real path, and whether their budget
  // (ReduceOptions::simplify_runs) stopped one.
  size_t simplify_runs() const { return real_.simplify_runs; }
  bool simplify_budget_reached() const { return simplify_budget_reached_; }
  double elapsed() const;
  void log(const std::string& line) const;

 private:
  // What happens on the real path, for logs, statistics and progress (nothing on guessed paths).
  void begin_pass(size_t pass);
  void end_pass();
  void committed(size_t size_before);
  void report_progress() const;
  // Where the tests went, by pass (verbose log, at the end).
  void log_spending() const;

  // Moves `path` to its next probe: starts passes, takes the results of passes that end (real
  // path: tells it). Returns the probe, or nullptr when the strategy is over on this path.
  const Probe* settle(Path& path, bool real);
  // The path after `answer` to its probe.
  void advance(Path& path, const Probe& probe, const Answer& answer, bool real);
  PassStatePtr start(const Path& path);
  // Whether a commit of the path's pass makes the strategy run another round.
  bool opens_a_round(const Path& path) const;
  // Whether the path's pass already ran to its end on the best candidate's node set (never for
  // certify), and recording that it just did.
  bool ended_on_these_nodes(const Path& path) const;
  void record_end(Path& path) const;
  Answer answer_of(const Verdict& v) const {
    return {v.interesting(), &v.failing_outputs, v.outcome != TestOutcome::Invalid};
  }
  // The path's pass simplifies and has no engine runs left (ReduceOptions::simplify_runs).
  bool out_of_simplify_runs(const Path& path) const;
  // The verdict of the real path's probe, testing it (and, with several jobs, what comes after it
  // most likely) and waiting. nullptr when stopped.
  const Verdict* obtain(const Probe& probe);
  // The candidates worth testing now, most likely needed first: the real path's probe, then the
  // probes of guessed paths, best-first by the probability of the guesses they rest on.
  std::vector<Wanted> plan();
  double prior(const Path& path, const Probe& probe) const;

  const ReductionGraph& g_;
  const ReduceOptions& options_;
  Strategy strategy_;
  CheckRunner runner_;
  Path real_;
  bool finished_ = false;
  bool simplify_budget_reached_ = false;
  RemovalPredictor predictor_;
  // Removal probes planned and not yet answered, so that their answers teach the predictor.
  std::unordered_map<Candidate, std::vector<size_t>> planned_removals_;
  // Pass starts by (pass, best, facts that matter): guessed paths start the same passes often.
  struct StartKey {
    size_t pass;
    Candidate best;
    uint32_t facts;  // Facts::start_key
    bool operator==(const StartKey&) const = default;
  };
  struct StartKeyHash {
    size_t operator()(const StartKey& k) const { return std::hash<Candidate>()(k.best) ^ (k.pass * 0x9e3779b97f4a7c15ull) ^ k.facts; }
  };
  std::unordered_map<StartKey, PassStatePtr, StartKeyHash> starts_;

  std::vector<PassStats> stats_;
  size_t stat_ = 0;  // the running pass's entry in stats_
  std::chrono::steady_clock::time_point pass_started_;
  size_t pass_checks_ = 0, pass_commits_ = 0, commits_ = 0;
  std::string pass_name_;
  std::chrono::steady_clock::time_point start_time_;
  size_t start_size_ = 0;  // nodes of the start candidate (progress: how much is removed)
};

}  // namespace reduce::detail
