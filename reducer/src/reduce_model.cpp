// reduce_model: validates options, then runs the default passes in rounds, or a baseline strategy.
#include <algorithm>
#include <chrono>

#include "passes/passes.h"
#include "reducer/reducer.h"
#include "scheduler.h"
#include "strategies/strategies.h"

namespace reduce {

namespace {

struct PassEntry {
  const char* name;
  detail::PassStatePtr (*start)(const detail::ReductionGraph&, const Candidate&, const detail::Facts&);
  const char* help;
};

const std::vector<PassEntry>& pass_table() {
  static const std::vector<PassEntry> table = {
#define REDUCER_PASS(name, start, help) {name, &detail::start, help},
#include "passes/passes.def"
#undef REDUCER_PASS
  };
  return table;
}

bool contains(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

Status check_start(const Candidate& c, size_t node_count) {
  if (c.nodes.empty()) return make_error("the start candidate keeps no node");
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    if (c.nodes[i] >= node_count)
      return make_error("the start candidate keeps node " + std::to_string(c.nodes[i]) + ", but the graph has " +
                        std::to_string(node_count) + " nodes");
    if (i > 0 && c.nodes[i] <= c.nodes[i - 1]) return make_error("the start candidate's nodes are not ascending");
  }
  return {};
}

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
    for (const auto& e : pass_table()) out.push_back(PassInfo{e.name, e.help});
    return out;
  }();
  return list;
}

const std::vector<std::string>& reduce_strategies() {
  static const std::vector<std::string> list = {"default", "polygraphy-bisect", "polygraphy-linear", "ddmin", "precision"};
  return list;
}

size_t candidate_size(const Model& model, const Candidate& candidate) {
  size_t n = 0;
  for (size_t i : candidate.nodes)
    if (i < model.graph.nodes.size() && !is_constant_node(model.graph.nodes[i])) ++n;
  return n;
}

Expected<ReduceResult> reduce_model(const Model& model, CandidateTest& test, const ReduceOptions& options) {
  const auto& strategies = reduce_strategies();
  if (!contains(strategies, options.strategy))
    return make_error("unknown strategy '" + options.strategy + "' (default, polygraphy-bisect, polygraphy-linear, ddmin, precision)");
  if (options.jobs < 1) return make_error("the number of jobs must be at least 1");
  REDUCE_ASSIGN(GraphIndex index, GraphIndex::build(model.graph));
  const size_t node_count = model.graph.nodes.size();
  if (node_count == 0) return make_error("the graph has no nodes to reduce");

  const Candidate start = options.start ? *options.start : Candidate::whole(model.graph);
  if (options.start) REDUCE_TRY(check_start(start, node_count));

  // The strategy as passes.
  detail::Strategy strategy;
  if (options.strategy == "default") {
    for (size_t i = 0; i < pass_table().size(); ++i)
      if (options.passes.runs(i)) strategy.passes.push_back({pass_table()[i].name, pass_table()[i].start});
    strategy.rounds = true;
  } else if (options.strategy == "ddmin") {
    strategy.passes = {{"ddmin", &detail::start_ddmin}};
  } else if (options.strategy == "precision") {
    strategy.passes = {{"ranked-prefix", &detail::start_ranked_prefix},
                       {"node-removal", &detail::start_node_removal},
                       {"certify", &detail::start_certify}};
    strategy.rounds = true;
  } else if (options.strategy == "polygraphy-bisect") {
    strategy.passes = {{"polygraphy-outputs", &detail::start_polygraphy_bisect_outputs},
                       {"polygraphy-inputs", &detail::start_polygraphy_bisect_inputs}};
  } else {
    strategy.passes = {{"polygraphy-outputs", &detail::start_polygraphy_linear_outputs},
                       {"polygraphy-inputs", &detail::start_polygraphy_linear_inputs}};
  }

  const detail::ReductionGraph g(model, std::move(index), options);
  detail::Scheduler s(g, test, options, std::move(strategy), start);
  s.log("reducing " + std::to_string(g.size_of(start)) + " nodes with strategy " + options.strategy);
  REDUCE_TRY(s.run());

  ReduceResult result;
  result.best = s.best();
  result.stopped = s.stopped();
  // Certified when the default strategy's last round, certify included, removed nothing; ddmin
  // ends at single units.
  if (!result.stopped && s.finished()) {
    if (options.strategy == "default") result.one_minimal = options.passes.runs(static_cast<size_t>(detail::PassId::start_certify));
    else if (options.strategy == "ddmin" || options.strategy == "precision") result.one_minimal = true;
  }
  result.checks = s.counts().checks;
  result.cache_hits = s.counts().cache_hits;
  result.slipped = s.counts().slipped;
  result.invalid = s.counts().invalid;
  result.seconds = s.elapsed();
  result.passes = s.pass_stats();
  if (s.malformed() > 0)
    return make_error("internal error: the reducer built " + std::to_string(s.malformed()) + " malformed candidates");
  s.log("reduced to " + std::to_string(g.size_of(result.best)) + " nodes in " + std::to_string(result.checks) + " checks" +
        (result.one_minimal ? " (1-minimal)" : "") + (result.stopped ? " (stopped)" : ""));
  return result;
}

}  // namespace reduce
