// Reduction: the state one reduction shares between passes — the graph, the best candidate so
// far, the check runner, and the candidate-building helpers every pass uses.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <optional>
#include <string>
#include <vector>

#include "check_runner.h"
#include "core/extract.h"
#include "core/graph_index.h"
#include "core/model.h"
#include "reducer/reducer.h"

namespace reduce::detail {

// Exponential, then binary search for the first interesting index in [0, count): probes 0, 1, 3,
// 7, ... while the steps stay below sqrt(count), then bisects what is left. Small answers cost
// about 2 log2(p) probes, large ones at most half again the bisection's log2(count).
struct Gallop {
  size_t first = 0, last = 0;  // the answer is in [first, last] (last = count: none)
  size_t reach = 0;
  bool galloping = true;
  static Gallop over(size_t count);
  std::optional<size_t> probe() const;
  Gallop advance(bool interesting) const;
};

class Reduction {
 public:
  Reduction(const Model& model, GraphIndex index, CandidateTest& test, const ReduceOptions& options,
            Candidate start);

  const Model& model() const { return *model_; }
  const Graph& graph() const { return model_->graph; }
  const GraphIndex& index() const { return index_; }
  const ReduceOptions& options() const { return *options_; }

  // Units are what passes remove: every node but Constant nodes, which follow their readers.
  bool is_unit(size_t node) const { return unit_[node]; }
  // The best candidate's units in topological order.
  std::vector<size_t> units() const { return units_of(best_); }
  std::vector<size_t> units_of(const Candidate& c) const;
  size_t size() const { return units().size(); }
  const Candidate& best() const { return best_; }

  // A candidate keeping exactly `units` plus the Constant nodes they read, with `base`'s frozen
  // values, outputs and input shapes where they still apply (explicit outputs that are no longer
  // produced are dropped; when none is left the defaults apply; when the base freezes all its cut
  // values, new ones are frozen too). nullopt when `units` is empty.
  std::optional<Candidate> with_units(const Candidate& base, std::vector<size_t> units) const;
  // The candidate's boundary, by the extractor's rule (core/extract.h: subgraph_boundary).
  SubgraphBoundary boundary(const Candidate& c) const {
    return subgraph_boundary(index_, initializers_, c.nodes, c.outputs);
  }
  // Its graph inputs (original inputs and cut values, first-use order), its cut values (what
  // cut-as-constant may freeze), and its outputs (explicit, or the defaults).
  std::vector<std::string> graph_inputs(const Candidate& c) const { return boundary(c).inputs(); }
  std::vector<std::string> cut_values(const Candidate& c) const { return boundary(c).cut_values(); }
  std::vector<std::string> outputs_of(const Candidate& c) const { return boundary(c).outputs; }
  // Non-empty outputs of a node.
  std::vector<std::string> node_outputs(size_t node) const;
  // Units of `c` that `unit` depends on through kept nodes (itself included), in topological order.
  std::vector<size_t> ancestors_within(const Candidate& c, size_t unit) const;
  // The declared or inferred type of a value of the main graph, or nullptr (inferred on first use).
  const ValueType* type_of(const std::string& value);

  // Set by first-divergence when marking intermediate outputs makes the failure disappear.
  bool marking_outputs_hides_failure = false;
  // Set by first-divergence to the candidate it narrowed to one failing node and its ancestors;
  // output-cut has nothing to find while this is still the best.
  std::optional<Candidate> single_sink;

  // Testing (see CheckRunner).
  std::optional<size_t> first_interesting(size_t count, const CandidateMaker& make) {
    return runner_.first_interesting(count, make);
  }
  std::vector<bool> all_interesting(size_t count, const CandidateMaker& make) {
    return runner_.all_interesting(count, make);
  }
  std::optional<bool> known_interesting(const Candidate& c) const { return runner_.known_interesting(c); }
  const std::vector<std::string>* failing_outputs(const Candidate& c) const { return runner_.failing_outputs(c); }
  // Every candidate tested so far, with its verdict (for predictors guessing future answers).
  const std::unordered_map<Candidate, TestOutcome>& verdicts() const { return runner_.verdicts(); }
  // Tests candidates in the background while slots are free (see CheckRunner::speculate); nothing
  // waits for them. Not while dry.
  void speculate(const std::vector<Candidate>& candidates) { runner_.speculate(candidates, false); }
  int jobs() const { return runner_.jobs(); }
  bool test_one(const Candidate& c) {
    return first_interesting(1, [&](size_t) { return std::optional<Candidate>(c); }).has_value();
  }
  // Runs a sequential decision process whose steps each test one candidate: probe(s) names the
  // candidate to test in state s (nullopt: done), advance(s, interesting) the next state. With
  // several jobs the next levels of the decision tree are tested at once; the states visited
  // stay those of -j 1. `visited` sees each decision taken (probe, answer). `after(s)`, when given,
  // lists what the caller (and the passes after it: follow_ups()) will test once the process
  // ends in state s, in order: ends reached inside a batch's tree bring these into the batch
  // while slots are free. `first_width` (0: all) caps the first tree, leaving slots to what a
  // prefetch started for the passes after this one. Returns the final state.
  template <typename State>
  State decide(State s, const std::function<std::optional<size_t>(const State&)>& probe,
               const std::function<State(const State&, bool)>& advance, const CandidateMaker& make,
               const std::function<void(size_t, bool)>& visited = {},
               const std::function<std::vector<Candidate>(const State&)>& after = {}, size_t first_width = 0);
  // Smallest p in [0, count) with make(p) interesting, by binary search (assumes the answers are
  // monotone: false...false true...true); `count` when none is. With several jobs, the next
  // levels of the search tree are tested speculatively; the decisions stay those of -j 1.
  // `after(p)`, when given: what the caller tests next when the answer is p (see decide()).
  size_t bisect_first(size_t count, const CandidateMaker& make,
                      const std::function<std::vector<Candidate>(size_t)>& after = {});
  // The same answer by exponential search from 0 (probes 0, 1, 3, 7, ... up to sqrt(count), then
  // bisection): about 2 log2(p) probes, fewer than bisection when the answer p is small.
  size_t gallop_first(size_t count, const CandidateMaker& make,
                      const std::function<std::vector<Candidate>(size_t)>& after = {});

  // With several jobs: runs `steps` dry (untested candidates are answered "not interesting" and
  // collected instead, up to one per job), undoes everything they changed, then starts tests of
  // the collected candidates in the background (CheckRunner::speculate: those that find no free
  // slot queue for one) and returns. When the prediction holds (the steps commit nothing new),
  // running them for real then finds the answers known or on their way. Does nothing with one
  // job.
  void prefetch(const std::function<void()>& steps);
  // The passes of a round, in order (the default strategy's selection).
  using PassFunction = void (*)(Reduction&);
  void set_passes(std::vector<PassFunction> passes) { passes_ = std::move(passes); }
  // Runs pass k as the current pass: predictions made in it run the passes after it.
  void run_pass(size_t k);
  // Runs passes k, k + 1, ... to the end of the round, then one whole round (what a prediction
  // from pass k - 1 runs dry).
  void run_from(size_t k);
  // The candidates the passes after this one would test first (up to one per job, in order) once
  // `outcome` has happened: `outcome` (its commits and flags) and the next passes run dry, then
  // everything is undone. Empty with one job or without passes; inside a prediction only
  // one level deep. For decide()'s follow-ups: speculation that crosses into the next passes.
  std::vector<Candidate> predict_after(const std::function<void()>& outcome);
  // decide()'s follow-ups of an end that commits `committed` (nullopt: nothing): that candidate,
  // then what the next passes would test first on it.
  std::vector<Candidate> follow_ups(std::optional<Candidate> committed);

  // Makes `c` the best candidate (the caller has seen it interesting and smaller). Returns false
  // (and changes nothing) when `c` equals the best.
  bool commit(Candidate c);

  bool stopped() const { return runner_.stopped(); }
  const CheckCounts& counts() const { return runner_.counts(); }
  size_t malformed() const { return runner_.malformed(); }
  void set_pass(std::string name);
  const std::string& pass() const { return pass_; }
  size_t commits() const { return commits_; }
  double elapsed() const;
  void log(const std::string& line) const;
  void verbose(const std::string& line) const;

 private:
  void report_progress() const;
  // Runs `steps` dry and undoes what they changed; returns the first `limit` candidates they
  // would have tested.
  std::vector<Candidate> predicted(const std::function<void()>& steps, size_t limit);

  const Model* model_;
  GraphIndex index_;
  const ReduceOptions* options_;
  std::vector<bool> unit_;
  InitializerIndex initializers_;
  Candidate best_;
  CheckRunner runner_;
  std::string pass_;
  size_t commits_ = 0;
  int predicting_ = 0;              // nesting of predicted() runs: dry while positive
  int follow_up_predictions_ = 0;   // of which predict_after() runs
  std::vector<PassFunction> passes_;
  size_t current_ = 0;  // the pass running (see run_pass)
  std::chrono::steady_clock::time_point start_time_;
  bool types_inferred_ = false;
  std::unordered_map<std::string, ValueType> types_;
};

template <typename State>
State Reduction::decide(State s, const std::function<std::optional<size_t>(const State&)>& probe,
                        const std::function<State(const State&, bool)>& advance, const CandidateMaker& make,
                        const std::function<void(size_t, bool)>& visited,
                        const std::function<std::vector<Candidate>(const State&)>& after, size_t first_width) {
  std::unordered_map<size_t, std::optional<Candidate>> built;  // probe number -> its candidate
  auto candidate_of = [&](size_t p) -> const std::optional<Candidate>& {
    auto it = built.find(p);
    if (it == built.end()) it = built.emplace(p, make(p)).first;
    return it->second;
  };
  auto known = [&](size_t p) -> std::optional<bool> {
    const auto& c = candidate_of(p);
    return c ? known_interesting(*c) : std::optional<bool>(false);
  };
  size_t width = first_width ? std::min(first_width, static_cast<size_t>(runner_.jobs())) : runner_.jobs();
  while (!stopped()) {
    if (!probe(s)) break;
    // Expand the decision tree level by level while the whole next level fits in `width` slots.
    // Probes already answered take no slot: the tree descends through them (a prefetch may
    // have answered its top levels). An end of the process reached at a level brings its
    // follow-up candidates (`after`, in the order the caller would test them, which is usually
    // a next pass's tree level by level): the k-th of them is placed log2(k + 1) levels below
    // the end, as likely as this tree's probes that deep.
    struct FollowUp {
      Candidate candidate;
      size_t level;
    };
    std::vector<size_t> probes;                    // unanswered probes, in tree order
    std::vector<Candidate> started;                // their candidates and the follow-ups
    std::vector<FollowUp> follow_ups;              // of the ends reached so far, not yet placed
    auto place = [&](Candidate c) {
      if (started.size() < width && !known_interesting(c) && std::find(started.begin(), started.end(), c) == started.end())
        started.push_back(std::move(c));
    };
    std::vector<State> level{s};
    for (size_t depth = 0; !level.empty(); ++depth) {
      std::vector<size_t> fresh;
      std::vector<State> ends;
      std::vector<State> open;  // states whose probe is unanswered: their children are the next level
      for (size_t i = 0; i < level.size(); ++i) {
        const State st = level[i];  // copy: level grows below
        const auto p = probe(st);
        if (!p) {
          ends.push_back(st);
          continue;
        }
        if (const auto k = known(*p); k && level.size() < 64 * width) {
          level.push_back(advance(st, *k));
          continue;
        }
        open.push_back(st);
        if (std::find(probes.begin(), probes.end(), *p) == probes.end() &&
            std::find(fresh.begin(), fresh.end(), *p) == fresh.end())
          fresh.push_back(*p);
      }
      // Follow-ups are asked for only while they could get a slot (predicting them runs passes dry).
      for (const State& st : ends) {
        if (!after || started.size() + fresh.size() + follow_ups.size() >= width) break;
        auto list = after(st);
        for (size_t k = 0; k < list.size(); ++k) {
          size_t below = 0;
          while ((size_t{2} << below) <= k + 1) ++below;
          follow_ups.push_back({std::move(list[k]), depth + below});
        }
      }
      const auto due = static_cast<size_t>(std::count_if(follow_ups.begin(), follow_ups.end(),
                                                         [&](const FollowUp& f) { return f.level <= depth; }));
      const bool fits = probes.empty() || started.size() + fresh.size() + due <= width;
      if (fits)
        for (size_t p : fresh) {
          probes.push_back(p);
          if (const auto& c = candidate_of(p)) started.push_back(*c);
        }
      // The follow-ups due at this level; all of them (shallowest first) where the tree stops.
      const bool last = !fits || fresh.empty();
      if (last)
        std::stable_sort(follow_ups.begin(), follow_ups.end(),
                         [](const FollowUp& a, const FollowUp& b) { return a.level < b.level; });
      std::vector<FollowUp> later;
      for (auto& f : follow_ups)
        if (last || f.level <= depth) place(std::move(f.candidate));
        else later.push_back(std::move(f));
      follow_ups = std::move(later);
      if (last) break;
      std::vector<State> next;
      for (const State& st : open) {
        next.push_back(advance(st, true));
        next.push_back(advance(st, false));
      }
      level = std::move(next);
    }
    width = runner_.jobs();
    if (predicting_ > 0) {
      // A predicted run collects the tree, in order, for prefetch to start.
      all_interesting(started.size(), [&](size_t k) { return std::optional<Candidate>(started[k]); });
    } else {
      // Start the tree, then follow the decisions -j 1 would take, waiting only for the answers
      // on that path: a probe answered early (or known) moves on without the rest of the level;
      // probes off the path keep running in the background until they are needed or their
      // slots are.
      runner_.start(started);
    }
    while (const auto p = probe(s)) {
      if (stopped()) break;
      const bool in_tree = std::find(probes.begin(), probes.end(), *p) != probes.end();
      if (!in_tree && !known(*p)) break;
      const auto& c = candidate_of(*p);
      const bool interesting = c && test_one(*c);
      if (stopped()) break;
      if (visited) visited(*p, interesting);
      s = advance(s, interesting);
    }
  }
  return s;
}

// "kept 12 nodes: Add, Mul, ..." for logs.
std::string describe(const Reduction& r, const Candidate& c);

}  // namespace reduce::detail
