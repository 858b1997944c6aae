// The keep-set search (keep_set_search.h): the checks before it, the reducer's precision strategy or
// Polygraphy's prefix baselines, and the fresh runs after it.
#include "keep_set_search.h"

#include <algorithm>
#include <chrono>

#include "core/candidate.h"
#include "reducer/reducer.h"

namespace reduce {

// The model with `set` kept (in FP32, or left in float) on every sample, the first (the one it
// fails on) first: the first verdict that fails, is invalid or was cancelled, else the first
// sample's (a pass).
Verdict check_set(const std::vector<Oracle*>& samples, const SetCheck& check, const std::vector<size_t>& set,
                  const std::atomic<bool>* cancel) {
  Verdict first;
  for (size_t i = 0; i < samples.size(); ++i) {
    Verdict v = check(*samples[i], set, cancel);
    if (v.cancelled || v.invalid || v.signature.fails()) return v;
    if (i == 0) first = std::move(v);
  }
  return first;
}

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

// The two checks before the search: the model fails as it is and passes with every candidate
// kept. False when that already decides the outcome (stopped, does not fail, fails even then).
// The model is checked on the samples in order up to the first it fails on, which moves to the
// front of `samples` (the search checks it first; the ranking uses it).
Expected<bool> worth_searching(std::vector<Oracle*>& samples, const KeepSetProblem& problem, std::atomic<bool>& cancelled,
                               PrecisionOutcome& out) {
  const Graph& g = samples[0]->model().graph;
  for (size_t i = 0; i < samples.size(); ++i) {
    Verdict v = samples[i]->evaluate(Candidate::whole(g), &cancelled);
    if (v.cancelled || cancelled) {
      out.stopped = true;
      return false;
    }
    if (v.invalid) return make_error("the model cannot be checked: " + v.invalid_reason);
    if (i == 0 || v.signature.fails()) out.before = std::move(v);
    if (out.before.signature.fails()) {
      out.failing_sample = i;
      std::rotate(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(i), samples.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      break;
    }
  }
  if (!out.before.signature.fails()) {
    out.kind = PrecisionOutcome::Kind::DoesNotFail;
    return false;
  }
  Oracle& oracle = *samples[0];
  oracle.set_target(out.before.signature);
  out.after = check_set(samples, problem.check, problem.candidates, &cancelled);
  out.all_kept = out.after;
  if (out.after.cancelled || cancelled) {
    out.stopped = true;
    return false;
  }
  if (out.after.invalid) return make_error("the model with every node " + problem.kept + " cannot be checked: " + out.after.invalid_reason);
  if (out.after.signature.fails()) {
    out.kind = PrecisionOutcome::Kind::FailsEvenInFp32;
    return false;
  }
  return true;
}

// The reducer's precision strategy over the candidates (ranked); the set it ends with, in
// topological order.
Status search_set(const std::vector<Oracle*>& samples, const KeepSetProblem& problem, const PrecisionOptions& options,
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

// Runs the answer again (never from a cache): the model with the set kept must pass on every
// sample and as it is must fail the same way, `confirm` times each. The set's first run is `after`.
void confirm_answer(const std::vector<Oracle*>& samples, const KeepSetProblem& problem, int confirm,
                    std::atomic<bool>& cancelled, PrecisionOutcome& out) {
  Oracle& oracle = *samples[0];
  const Graph& g = oracle.model().graph;
  std::vector<size_t> set;
  for (const auto& p : out.pinned) set.push_back(p.node);
  for (int r = 0; r < confirm; ++r) {
    std::sort(set.begin(), set.end());
    Verdict with_set = check_set(samples, problem.check, set, &cancelled);
    Verdict as_is = oracle.rerun(Candidate::whole(g), &cancelled);
    if (with_set.cancelled || as_is.cancelled || cancelled) {
      out.stopped = true;
      return;
    }
    ++out.confirm_runs;
    out.set_passed_again += !with_set.invalid && !with_set.fails();
    out.original_failed_again += oracle.match(as_is) == SignatureMatch::Same;
    if (r == 0) out.after = std::move(with_set);
  }
}

// Polygraphy's `debug precision`: keeps the first K candidates of the topological order (or the
// last K) and searches K, by bisection (assumes more nodes kept never fails again) or one node
// more per check. The model fails at K = 0 and passes at K = all (checked before).
Status search_prefix(const std::vector<Oracle*>& samples, const KeepSetProblem& problem, const PrecisionOptions& options,
                     std::atomic<bool>& cancelled, PrecisionOutcome& out) {
  Oracle& oracle = *samples[0];
  const Graph& g = oracle.model().graph;
  std::vector<size_t> order;
  for (size_t n : oracle.extractor().index().topological_order())
    if (std::binary_search(problem.candidates.begin(), problem.candidates.end(), n)) order.push_back(n);
  if (options.from_outputs) std::reverse(order.begin(), order.end());
  auto first = [&](size_t k) { return std::vector<size_t>(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k)); };
  size_t passes_at = order.size(), fails_at = 0;  // known: K = all passes, K = 0 fails
  Verdict best = out.after;
  const auto start = std::chrono::steady_clock::now();
  // One set: true when the model passes with it; nullopt when stopped.
  auto passes = [&](size_t k) -> Expected<std::optional<bool>> {
    std::vector<size_t> set = first(k);
    std::sort(set.begin(), set.end());
    const Verdict v = check_set(samples, problem.check, set, &cancelled);
    if (v.cancelled || cancelled) return std::optional<bool>{};
    if (v.invalid) return make_error("the model with " + std::to_string(k) + " nodes " + problem.kept + " cannot be checked: " + v.invalid_reason);
    ++out.checks;
    if (!v.signature.fails()) best = v;
    if (options.log)
      options.log(options.strategy + ": " + std::to_string(k) + " of " + std::to_string(order.size()) + " nodes " + problem.kept + ": " +
                  (v.signature.fails() ? "fails" : "passes"));
    return std::optional<bool>{!v.signature.fails()};
  };
  while (passes_at - fails_at > 1) {
    const size_t k = options.strategy == "polygraphy-linear" ? fails_at + 1 : fails_at + (passes_at - fails_at) / 2;
    REDUCE_ASSIGN(const std::optional<bool> answer, passes(k));
    if (!answer) {
      out.stopped = true;
      break;
    }
    (*answer ? passes_at : fails_at) = k;
    // Linear search stops at the first K that passes.
    if (*answer && options.strategy == "polygraphy-linear") break;
  }
  std::vector<size_t> set = first(passes_at);
  if (options.from_outputs) std::reverse(set.begin(), set.end());  // reported in topological order
  for (size_t n : set) out.pinned.push_back({n, g.nodes[n].name, g.nodes[n].op_type, 0.0});
  out.after = best;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {};
}

}  // namespace

Status search_keep_set(std::vector<Oracle*>& samples, const KeepSetProblem& problem, const PrecisionOptions& options,
                       std::atomic<bool>& cancelled, PrecisionOutcome& out, bool& searched) {
  REDUCE_ASSIGN(searched, worth_searching(samples, problem, cancelled, out));
  out.strategy = options.strategy + (options.strategy != "default" && options.from_outputs ? " reverse" : "");
  if (!searched) return {};
  if (options.strategy == "default") REDUCE_TRY(search_set(samples, problem, options, cancelled, out));
  else REDUCE_TRY(search_prefix(samples, problem, options, cancelled, out));
  if (!out.stopped) confirm_answer(samples, problem, std::max(options.confirm, 1), cancelled, out);
  return {};
}

}  // namespace reduce
