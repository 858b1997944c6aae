// reduce_model: validates options, then runs the default passes in rounds, or a baseline strategy.
#include <algorithm>
#include <chrono>

#include "passes/passes.h"
#include "reducer/reducer.h"
#include "reduction.h"
#include "strategies/strategies.h"

namespace reduce {

namespace {

using detail::Reduction;

struct PassEntry {
  const char* name;
  void (*run)(Reduction&);
  const char* help;
};

const std::vector<PassEntry>& pass_table() {
  static const std::vector<PassEntry> table = {
#define REDUCER_PASS(name, function, help) {name, &detail::function, help},
#include "passes/passes.def"
#undef REDUCER_PASS
  };
  return table;
}

bool contains(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// Runs one step and records its checks, commits and time under `name`.
template <typename Step>
void timed(Reduction& r, std::vector<PassStats>& stats, const std::string& name, Step step) {
  auto it = std::find_if(stats.begin(), stats.end(), [&](const PassStats& s) { return s.name == name; });
  if (it == stats.end()) {
    stats.push_back(PassStats{name, 0, 0, 0});
    it = stats.end() - 1;
  }
  const size_t index = static_cast<size_t>(it - stats.begin());
  const auto t0 = std::chrono::steady_clock::now();
  const size_t checks0 = r.counts().checks, commits0 = r.commits();
  r.set_pass(name);
  step();
  PassStats& s = stats[index];
  s.checks += r.counts().checks - checks0;
  s.successes += r.commits() - commits0;
  s.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
  static const std::vector<std::string> list = {"default", "polygraphy-bisect", "polygraphy-linear", "ddmin"};
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
    return make_error("unknown strategy '" + options.strategy + "' (default, polygraphy-bisect, polygraphy-linear, ddmin)");
  if (options.jobs < 1) return make_error("the number of jobs must be at least 1");
  REDUCE_ASSIGN(GraphIndex index, GraphIndex::build(model.graph));
  const size_t node_count = model.graph.nodes.size();
  if (node_count == 0) return make_error("the graph has no nodes to reduce");

  const Candidate start = options.start ? *options.start : Candidate::whole(model.graph);
  if (options.start) REDUCE_TRY(check_start(start, node_count));

  Reduction r(model, std::move(index), test, options, start);
  ReduceResult result;
  r.log("reducing " + std::to_string(r.size()) + " nodes with strategy " + options.strategy);
  if (options.strategy == "default") {
    std::vector<const PassEntry*> selected;
    for (size_t i = 0; i < pass_table().size(); ++i)
      if (options.passes.runs(i)) selected.push_back(&pass_table()[i]);
    const bool certifies = options.passes.runs(static_cast<size_t>(detail::PassId::run_certify));
    std::vector<Reduction::PassFunction> functions;
    for (const PassEntry* e : selected) functions.push_back(e->run);
    r.set_passes(std::move(functions));
    for (size_t round = 1; !r.stopped(); ++round) {
      const size_t commits = r.commits();
      for (size_t k = 0; k < selected.size() && !r.stopped(); ++k) {
        // With several jobs, free slots test what the rest of the round (and the next one)
        // would ask if nothing more changes: passes that only confirm then cost no wait.
        r.prefetch([&] { r.run_from(k); });
        timed(r, result.passes, selected[k]->name, [&] { r.run_pass(k); });
      }
      if (r.stopped()) break;
      if (r.commits() == commits) {
        result.one_minimal = certifies;  // certify's sweep just found nothing to remove
        break;
      }
      r.log("round " + std::to_string(round) + " done: " + std::to_string(r.size()) + " nodes, " +
            std::to_string(r.counts().checks) + " checks");
    }
  } else if (options.strategy == "ddmin") {
    bool done = false;
    timed(r, result.passes, "ddmin", [&] { done = detail::run_ddmin(r); });
    result.one_minimal = done && !r.stopped();
  } else {
    const bool bisect = options.strategy == "polygraphy-bisect";
    timed(r, result.passes, "polygraphy-outputs", [&] { detail::run_polygraphy_outputs(r, bisect); });
    if (!r.stopped())
      timed(r, result.passes, "polygraphy-inputs", [&] { detail::run_polygraphy_inputs(r, bisect); });
  }

  result.best = r.best();
  result.stopped = r.stopped();
  if (result.stopped) result.one_minimal = false;
  result.checks = r.counts().checks;
  result.cache_hits = r.counts().cache_hits;
  result.slipped = r.counts().slipped;
  result.invalid = r.counts().invalid;
  result.seconds = r.elapsed();
  if (r.malformed() > 0)
    return make_error("internal error: the reducer built " + std::to_string(r.malformed()) + " malformed candidates");
  r.log("reduced to " + std::to_string(r.size()) + " nodes in " + std::to_string(result.checks) + " checks" +
        (result.one_minimal ? " (1-minimal)" : "") + (result.stopped ? " (stopped)" : ""));
  return result;
}

}  // namespace reduce
