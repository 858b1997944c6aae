// Pass: a reduction pass as a state machine (C-Vise's shape). `start` gives the first state for
// the best candidate; a state names the candidate to test next (its probe) and the state after
// each answer. States are immutable values: the scheduler follows many of them ahead under
// guessed answers, in parallel, while only real answers move the reduction. A pass never tests,
// waits, commits or speculates itself (reducer/src/scheduler.h does).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reduction_graph.h"

namespace reduce::detail {

// One node and its ancestors, where a search showed that no earlier node's ancestors fail (under
// the search's own assumption: what a failing candidate keeps, a smaller one needs too). It still
// holds for a candidate within these nodes that keeps the node: output-cut has nothing to find.
struct SingleSink {
  std::vector<size_t> nodes;  // sorted, as Candidate::nodes
  size_t sink = 0;
  bool covers(const Candidate& c) const {
    return std::binary_search(c.nodes.begin(), c.nodes.end(), sink) &&
           std::includes(nodes.begin(), nodes.end(), c.nodes.begin(), c.nodes.end());
  }
};

// What passes learn that outlives them, carried from pass to pass along a path of decisions.
struct Facts {
  // first-divergence found that marking intermediate outputs makes the failure disappear.
  bool marking_outputs_hides_failure = false;
  // What first-divergence narrowed to, or output-cut cut to: output-cut has nothing to find in
  // a best candidate it covers.
  std::optional<SingleSink> single_sink;
  // The precision strategy's halving ran (once per reduction: a later round's set is what it or
  // node-removal left, which it would only halve in vain).
  bool halved = false;

  // Per pass (index in the strategy's list): a hash of the node set of the best candidate when the
  // pass last ran to its end (0: never). A later round does not start a pass again on the same
  // node set (Scheduler::start): what changed since were edits that are not node removals.
  std::vector<uint64_t> ended_on;
  // What a pass's start can depend on, given the best candidate: facts with equal keys give the
  // same start (the scheduler memoizes starts by it without knowing the fields). One bit each.
  uint32_t start_key(const Candidate& best) const {
    return (marking_outputs_hides_failure ? 1u : 0u) | (single_sink && single_sink->covers(best) ? 2u : 0u) | (halved ? 4u : 0u);
  }
};

// The candidate a state asks about.
struct Probe {
  Candidate candidate;
  // When interesting, the candidate becomes the best one (the pass goes on from it).
  bool commit = false;
  // A removal probe: the units it removes from the pass's current candidate. The scheduler's
  // predictor guesses its answer from the answers to other removals.
  std::vector<size_t> removed;
  // Otherwise, the chance that the answer is interesting as the pass's search sees it. It only
  // steers speculation: the path never depends on it.
  double likely = 0.5;
};

struct Answer {
  bool interesting = false;
  // The candidate's outputs the test found wrong (TestResult::failing_outputs), when known.
  const std::vector<std::string>* failing_outputs = nullptr;
  // The test reached the engine (the candidate was not refused as invalid before it).
  bool ran = true;
};

class PassState;
using PassStatePtr = std::shared_ptr<const PassState>;

class PassState {
 public:
  virtual ~PassState() = default;
  // The candidate to test next; nullopt when the pass is over.
  virtual const std::optional<Probe>& probe() const = 0;
  // The state after the probe's answer.
  virtual PassStatePtr advance(const ReductionGraph& g, const Answer& answer) const = 0;
  // Once over: a candidate already answered interesting to make the best (the end of a search),
  // and what the pass learned.
  virtual std::optional<Candidate> result() const { return std::nullopt; }
  // When the pass is stopped before its end (the simplification budget): a candidate already
  // answered interesting that its search had accepted but not yet made the best, if any.
  virtual std::optional<Candidate> result_so_far() const { return result(); }
  virtual void conclude(Facts&) const {}
};

// A pass of a strategy: its name (for logs and statistics) and its first state on `best`
// (nullptr: nothing to do).
struct Pass {
  const char* name;
  PassStatePtr (*start)(const ReductionGraph& g, const Candidate& best, const Facts& facts);
  // Edits the candidate without removing nodes (passes.def): its engine runs count against
  // ReduceOptions::simplify_runs.
  bool simplifies = false;
};

// Most passes search over numbered candidates: `Search` is a small value with probe() ->
// optional<size_t> and advance(bool) -> Search; `make(k)` builds candidate k (nullopt: skipped,
// answered "not interesting" without a test). Derived states give make() and the end.
template <typename Derived, typename Search>
class SearchState : public PassState {
 public:
  const std::optional<Probe>& probe() const override { return probe_; }
  PassStatePtr advance(const ReductionGraph& g, const Answer& answer) const override {
    auto next = std::make_shared<Derived>(static_cast<const Derived&>(*this));
    next->search = search.advance(answer.interesting);
    if (answer.interesting) next->last_interesting = probe_->candidate;
    next->settle(g);
    return next;
  }

  Search search;
  // The candidate of the latest probe answered interesting: where a search for the first
  // interesting index ends (its result), if any probe was.
  std::optional<Candidate> last_interesting;

 protected:
  // Moves past the probes without a candidate; sets probe_. Call once the state is built.
  void settle(const ReductionGraph& g) {
    probe_.reset();
    while (const auto k = search.probe()) {
      if (auto c = static_cast<const Derived&>(*this).make(g, *k)) {
        probe_ = Probe{std::move(*c), static_cast<const Derived&>(*this).commits(), {}};
        return;
      }
      search = search.advance(false);
    }
  }
  bool commits() const { return false; }

 private:
  std::optional<Probe> probe_;
};

// Exponential, then binary search for the first interesting index in [0, count): probes 0, 1, 3,
// 7, ... while the steps stay below sqrt(count), then bisects what is left. Small answers cost
// about 2 log2(p) probes, large ones at most half again the bisection's log2(count).
// `doubling` keeps doubling up to count (exponential search): an answer p costs about 2 log2(p)
// whatever the count, a large one up to twice the bisection's.
struct Gallop {
  size_t first = 0, last = 0;  // the answer is in [first, last] (last = count: none)
  size_t reach = 0;
  bool galloping = true;
  static Gallop over(size_t count);
  static Gallop doubling(size_t count);
  std::optional<size_t> probe() const;
  Gallop advance(bool interesting) const;
};

// Binary search for the first interesting index in [0, count) (answers assumed monotone).
struct Bisection {
  size_t first = 0, last = 0;  // the answer is in [first, last] (last = count: none)
  static Bisection over(size_t count) { return {0, count}; }
  std::optional<size_t> probe() const {
    if (first >= last) return std::nullopt;
    return first + (last - first) / 2;
  }
  Bisection advance(bool interesting) const {
    const size_t mid = *probe();
    return interesting ? Bisection{first, mid} : Bisection{mid + 1, last};
  }
};

// A scan for the first interesting index in [0, count), in order.
struct Scan {
  size_t next = 0, count = 0;
  bool found = false;
  static Scan over(size_t count) { return {0, count, false}; }
  std::optional<size_t> probe() const {
    if (found || next >= count) return std::nullopt;
    return next;
  }
  Scan advance(bool interesting) const { return interesting ? Scan{next, count, true} : Scan{next + 1, count, false}; }
};

}  // namespace reduce::detail
