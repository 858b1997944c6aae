// The keep-set search (keep_set_search.h): the checks before it, the strategy of strategies.def
// that searches, and the fresh runs after it.
#include "keep_set_search.h"

#include <algorithm>

#include "core/candidate.h"
#include "strategies/strategies.h"

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

struct StrategyEntry {
  PrecisionStrategyInfo info;
  Status (*search)(const std::vector<Oracle*>&, const KeepSetProblem&, const PrecisionOptions&, std::atomic<bool>&,
                   PrecisionOutcome&);
};

const std::vector<StrategyEntry>& strategy_table() {
  static const std::vector<StrategyEntry> table = {
#define PRECISION_STRATEGY(name, search, directed, help) {{name, directed, help}, &detail::search},
#include "strategies/strategies.def"
#undef PRECISION_STRATEGY
  };
  return table;
}

const StrategyEntry* find_strategy(const std::string& name) {
  for (const auto& e : strategy_table())
    if (e.info.name == name) return &e;
  return nullptr;
}

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
  oracle.target().set(out.before.signature);
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
    out.original_failed_again += oracle.target().match(as_is) == SignatureMatch::Same;
    if (r == 0) out.after = std::move(with_set);
  }
}

}  // namespace

Status search_keep_set(std::vector<Oracle*>& samples, const KeepSetProblem& problem, const PrecisionOptions& options,
                       std::atomic<bool>& cancelled, PrecisionOutcome& out, bool& searched) {
  const StrategyEntry* strategy = find_strategy(options.strategy);
  if (!strategy) return make_error("unknown precision strategy '" + options.strategy + "'");
  REDUCE_ASSIGN(searched, worth_searching(samples, problem, cancelled, out));
  out.strategy = options.strategy + (strategy->info.directed && options.from_outputs ? " reverse" : "");
  if (!searched) return {};
  REDUCE_TRY(strategy->search(samples, problem, options, cancelled, out));
  if (!out.stopped) confirm_answer(samples, problem, std::max(options.confirm, 1), cancelled, out);
  return {};
}

const std::vector<PrecisionStrategyInfo>& precision_strategies() {
  static const std::vector<PrecisionStrategyInfo> list = [] {
    std::vector<PrecisionStrategyInfo> out;
    for (const auto& e : strategy_table()) out.push_back(e.info);
    return out;
  }();
  return list;
}

bool is_precision_strategy(const std::string& name) { return find_strategy(name) != nullptr; }

std::string precision_strategy_names() {
  const auto& list = precision_strategies();
  std::string s;
  for (size_t i = 0; i < list.size(); ++i) s += (i == 0 ? "" : i + 1 == list.size() ? " or " : ", ") + list[i].name;
  return s;
}

}  // namespace reduce
