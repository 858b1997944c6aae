// reduce_model: validates options, then runs a strategy of strategies.def (the default: the passes in rounds).
#include <algorithm>
#include <chrono>

#include "core/body_nodes.h"
#include "passes/passes.h"
#include "reducer/reducer.h"
#include "scheduler.h"
#include "strategies/strategies.h"

namespace reduce {

namespace detail {

const std::vector<PassEntry>& pass_table() {
  static const std::vector<PassEntry> table = {
#define REDUCER_PASS(name, start, simplifies, help) {name, &start, simplifies, help},
#include "passes/passes.def"
#undef REDUCER_PASS
  };
  return table;
}

}  // namespace detail

namespace {

using detail::pass_table;

// The index of a pass in pass_table(), or an error naming it.
Expected<size_t> pass_index(const std::string& name) {
  const auto& t = pass_table();
  for (size_t i = 0; i < t.size(); ++i)
    if (name == t[i].name) return i;
  return make_error("unknown pass '" + name + "' (see --print-passes)");
}

}  // namespace

PassSelection::PassSelection() : runs_(pass_table().size(), true) {}

size_t PassSelection::count() const { return static_cast<size_t>(std::count(runs_.begin(), runs_.end(), true)); }

Expected<PassSelection> select_passes(const std::vector<std::string>& passes, const std::vector<std::string>& skip_passes) {
  PassSelection selection;
  if (!passes.empty()) selection.runs_.assign(selection.runs_.size(), false);
  for (const auto& name : passes) {
    REDUCE_ASSIGN(const size_t i, pass_index(name));
    selection.runs_[i] = true;
  }
  for (const auto& name : skip_passes) {
    REDUCE_ASSIGN(const size_t i, pass_index(name));
    selection.runs_[i] = false;
  }
  return selection;
}

const std::vector<PassInfo>& reduce_passes() {
  static const std::vector<PassInfo> list = [] {
    std::vector<PassInfo> out;
    for (const auto& e : pass_table()) out.push_back(PassInfo{e.name, e.help, e.simplifies});
    return out;
  }();
  return list;
}

namespace {

struct StrategyEntry {
  StrategyInfo info;
  detail::Strategy (*build)(const ReduceOptions&);
};

const std::vector<StrategyEntry>& strategy_table() {
  static const std::vector<StrategyEntry> table = {
#define REDUCER_STRATEGY(name, build, offered, help) {{name, offered, help}, &detail::build},
#include "strategies/strategies.def"
#undef REDUCER_STRATEGY
  };
  return table;
}

}  // namespace

const std::vector<StrategyInfo>& reduce_strategy_list() {
  static const std::vector<StrategyInfo> list = [] {
    std::vector<StrategyInfo> out;
    for (const auto& e : strategy_table()) out.push_back(e.info);
    return out;
  }();
  return list;
}

const std::vector<std::string>& reduce_strategies() {
  static const std::vector<std::string> list = [] {
    std::vector<std::string> out;
    for (const auto& e : strategy_table()) out.push_back(e.info.name);
    return out;
  }();
  return list;
}

std::string offered_strategies() {
  std::string names;
  for (const auto& e : strategy_table())
    if (e.info.offered) names += (names.empty() ? "" : ", ") + e.info.name;
  return names;
}

size_t candidate_size(const Model& model, const Candidate& candidate) {
  size_t n = 0;
  for (size_t i : candidate.nodes)
    if (i < model.graph.nodes.size() && !is_constant_node(model.graph.nodes[i])) ++n;
  return n;
}

Expected<ReduceResult> reduce_model(const Model& model, CandidateTest& test, const ReduceOptions& options) {
  const auto entry = std::find_if(strategy_table().begin(), strategy_table().end(),
                                  [&](const StrategyEntry& e) { return e.info.name == options.strategy; });
  if (entry == strategy_table().end())
    return make_error("unknown strategy '" + options.strategy + "' (" + offered_strategies() + ")");
  if (options.jobs < 1) return make_error("the number of jobs must be at least 1");
  REDUCE_ASSIGN(GraphIndex index, GraphIndex::build(model.graph));
  const size_t node_count = model.graph.nodes.size();
  if (node_count == 0) return make_error("the graph has no nodes to reduce");

  const Candidate start = options.start ? *options.start : Candidate::whole(model.graph);
  if (options.start)
    if (Status s = check_well_formed(start, node_count, BodyNodes(model.graph).size()); !s.ok())
      return make_error("start: " + s.error().what);

  detail::Strategy strategy = entry->build(options);
  const bool certifies = strategy.certifies;
  // Body units are certified by the certify pass only (other strategies' sweeps are top-level).
  const bool certifies_bodies = std::any_of(strategy.passes.begin(), strategy.passes.end(),
                                            [](const detail::Pass& p) { return p.start == &detail::start_certify; });

  const detail::ReductionGraph g(model, std::move(index), options, certifies, strategy.subgraphs);
  detail::Scheduler s(g, test, options, std::move(strategy), start);
  s.log("reducing " + std::to_string(g.size_of(start)) + " nodes with strategy " + options.strategy);
  REDUCE_TRY(s.run());

  ReduceResult result;
  result.best = s.best();
  result.stopped = s.stopped();
  // Certified when a strategy that certifies (the default with certify, ddmin, precision) ran to its
  // end, over every unit: nodes left inside bodies too.
  const size_t body_left = g.body_units_of(result.best).size();
  result.one_minimal = !result.stopped && s.finished() && certifies && (certifies_bodies || body_left == 0);
  result.body_nodes = body_left;
  result.checks = s.counts().checks;
  result.cache_hits = s.counts().cache_hits;
  result.rounds = s.rounds();
  result.slipped = s.counts().slipped;
  result.invalid = s.counts().invalid;
  result.seconds = s.elapsed();
  result.passes = s.pass_stats();
  result.simplify_runs = s.simplify_runs();
  result.simplify_budget_reached = s.simplify_budget_reached();
  if (s.malformed() > 0)
    return make_error("internal error: the reducer built " + std::to_string(s.malformed()) + " malformed candidates");
  s.log("reduced to " + std::to_string(g.size_of(result.best)) + " nodes" +
        (body_left > 0 ? " and " + std::to_string(body_left) + " nodes in bodies" : "") + " in " +
        std::to_string(result.checks) + " checks" + (result.one_minimal ? " (1-minimal)" : "") +
        (result.stopped ? " (stopped)" : ""));
  return result;
}

}  // namespace reduce
