// The default strategy: the reducer's precision strategy over the candidates, ranked by the error
// they add alone; the set it ends with is 1-minimal when it runs to its end.
#include <algorithm>
#include <map>

#include "core/candidate.h"
#include "reducer/reducer.h"
#include "strategies.h"

namespace reduce::detail {

namespace {

// A candidate's nodes are the set kept; it is interesting when the model then passes on every
// sample.
class KeptSetTest : public CandidateTest {
 public:
  KeptSetTest(const std::vector<Oracle*>& samples, const SetCheck& check) : samples_(samples), check_(check) {}
  TestResult test(const Candidate& c, const std::atomic<bool>& cancel) override {
    const Verdict v = check_set(samples_, check_, c.nodes, &cancel);
    if (v.cancelled) return {TestOutcome::Cancelled, false, {}};
    if (v.invalid) return {TestOutcome::Invalid, false, {}};
    return {v.signature.fails() ? TestOutcome::Uninteresting : TestOutcome::Interesting, false, {}};
  }

 private:
  const std::vector<Oracle*>& samples_;
  const SetCheck& check_;
};

}  // namespace

Status search_one_minimal(const std::vector<Oracle*>& samples, const KeepSetProblem& problem, const PrecisionOptions& options,
                          std::atomic<bool>& cancelled, PrecisionOutcome& out) {
  Oracle& oracle = *samples[0];
  const Graph& g = oracle.model().graph;
  std::map<size_t, double> local_error;
  ReduceOptions ro;
  ro.strategy = "precision";
  ro.jobs = options.jobs;
  ro.ranking = problem.rank(oracle, local_error, out.origin);
  ro.start = Candidate{};
  ro.start->nodes = problem.candidates;
  ro.stop = &cancelled;
  ro.log = options.log;
  KeptSetTest test(samples, problem.check);
  REDUCE_ASSIGN(ReduceResult r, reduce_model(oracle.model(), test, ro));
  for (size_t n : oracle.extractor().index().topological_order())
    if (std::binary_search(r.best.nodes.begin(), r.best.nodes.end(), n)) {
      auto it = local_error.find(n);
      out.pinned.push_back({n, g.nodes[n].name, g.nodes[n].op_type, it == local_error.end() ? 0.0 : it->second});
    }
  out.checks = r.checks;
  out.one_minimal = r.one_minimal;
  out.stopped = r.stopped;
  out.seconds = r.seconds;
  return {};
}

}  // namespace reduce::detail
