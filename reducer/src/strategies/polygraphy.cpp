// polygraphy-bisect / polygraphy-linear: Polygraphy's `debug reduce` reimplemented on candidates.
#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_set>

#include "core/graph_algorithms.h"
#include "strategies.h"

namespace reduce::detail {

namespace {

// Polygraphy's bisect markers: a good/bad pair of node indices; its "success" is a passing check,
// i.e. a candidate not interesting.
struct Markers {
  size_t index = 0, count = 0;
  long good = 0, bad = 0;
  static Markers over(size_t count, bool invert) {
    Markers m;
    m.count = count;
    m.index = count / 2;
    m.good = invert ? static_cast<long>(count) : 0;
    m.bad = invert ? 0 : static_cast<long>(count);
    return m;
  }
  std::optional<size_t> probe() const {
    if (std::labs(good - bad) <= 1 || index >= count) return std::nullopt;
    return index;
  }
  Markers advance(bool interesting) const {
    Markers next = *this;
    if (!interesting) next.good = static_cast<long>(index);
    else next.bad = static_cast<long>(index);
    const double mid = static_cast<double>(next.good + next.bad) / 2.0;
    next.index = static_cast<size_t>(!interesting ? std::ceil(mid) : std::floor(mid));
    return next;
  }
};

// Polygraphy's linear mode: every node, from the last down (outputs) or the first up (inputs).
struct Linear {
  size_t k = 0, count = 0;
  bool invert = false;
  static Linear over(size_t count, bool invert) { return {0, count, invert}; }
  std::optional<size_t> probe() const {
    if (k >= count) return std::nullopt;
    return invert ? k : count - 1 - k;
  }
  Linear advance(bool) const { return {k + 1, count, invert}; }
};

// What a phase fixes at its start: the candidate at position i and its node count.
struct Phase {
  Candidate base;
  std::vector<size_t> units;
  std::function<std::optional<Candidate>(size_t)> make;
  std::function<size_t(size_t)> size;
};

// Both modes remember the failing position with the fewest nodes (later answers win ties).
template <typename Search>
class PolygraphyState : public SearchState<PolygraphyState<Search>, Search> {
  using Base = SearchState<PolygraphyState<Search>, Search>;

 public:
  PolygraphyState(const ReductionGraph& g, std::shared_ptr<const Phase> phase, Search search) : phase_(std::move(phase)) {
    this->search = search;
    this->settle(g);
  }
  std::optional<Candidate> make(const ReductionGraph&, size_t i) const { return phase_->make(i); }
  PassStatePtr advance(const ReductionGraph& g, const Answer& answer) const override {
    auto next = Base::advance(g, answer);
    if (!answer.interesting) return next;
    const size_t i = *this->search.probe();
    auto t = std::make_shared<PolygraphyState>(static_cast<const PolygraphyState&>(*next));
    if (!best_ || phase_->size(i) <= phase_->size(*best_)) {
      t->best_ = i;
      t->chosen_ = this->probe()->candidate;
    }
    return t;
  }
  std::optional<Candidate> result() const override { return chosen_; }

 private:
  std::shared_ptr<const Phase> phase_;
  std::optional<size_t> best_;
  std::optional<Candidate> chosen_;
};

PassStatePtr start_phase(const ReductionGraph& g, std::shared_ptr<const Phase> phase, bool bisect, bool invert) {
  const size_t count = phase->units.size();
  PassStatePtr s;
  if (bisect) s = std::make_shared<PolygraphyState<Markers>>(g, std::move(phase), Markers::over(count, invert));
  else s = std::make_shared<PolygraphyState<Linear>>(g, std::move(phase), Linear::over(count, invert));
  return s->probe() ? s : nullptr;
}

// Earliest node whose outputs still fail: outputs marked, ancestors kept.
PassStatePtr start_outputs(const ReductionGraph& g, const Candidate& best, bool bisect) {
  auto phase = std::make_shared<Phase>();
  phase->base = best;
  phase->units = g.units_of(best);
  if (phase->units.empty()) return nullptr;
  const Phase* p = phase.get();
  phase->make = [&g, p](size_t i) -> std::optional<Candidate> {
    auto c = g.with_units(p->base, g.ancestors_within(p->base, p->units[i]));
    // A pair's QuantizeLinear is no sink: its quantized value goes only into its DequantizeLinear nodes.
    if (!c || !ReductionGraph::keeps(*c, p->units[i]) || g.quantizes_pair(p->units[i])) return std::nullopt;
    c->outputs = g.node_outputs(p->units[i]);
    return c;
  };
  phase->size = [&g, p](size_t i) { return g.ancestors_within(p->base, p->units[i]).size(); };
  return start_phase(g, std::move(phase), bisect, false);
}

// Latest node whose inputs still fail: inputs cut there, other dangling values frozen.
PassStatePtr start_inputs(const ReductionGraph& g, const Candidate& best, bool bisect) {
  auto phase = std::make_shared<Phase>();
  phase->base = best;
  phase->units = g.units_of(best);
  if (phase->units.empty()) return nullptr;
  const Phase* p = phase.get();
  const auto sinks = std::make_shared<const std::vector<std::string>>(g.outputs_of(best));
  // Inputs marked at node i: keep what reaches an output without reading one of node i's inputs.
  auto kept_units = [&g, p, sinks](size_t i) {
    const Graph& graph = g.graph();
    const std::unordered_set<std::string_view> cut(graph.nodes[p->units[i]].inputs.begin(), graph.nodes[p->units[i]].inputs.end());
    const auto uncut = [&cut](std::string_view v) { return !cut.count(v); };
    NodeMask in_base(graph.nodes.size(), false);
    for (size_t n : p->base.nodes) in_base[n] = true;
    std::vector<size_t> start, out;
    for (const auto& o : *sinks)
      if (auto q = g.index().producer(o); q && in_base[*q] && uncut(o)) start.push_back(*q);
    const NodeMask reached = ancestors_through(g.index(), start, uncut, in_base);
    for (size_t n = 0; n < reached.size(); ++n)
      if (reached[n] && g.is_unit(n)) out.push_back(n);
    return out;
  };
  phase->make = [&g, p, kept_units](size_t i) -> std::optional<Candidate> {
    auto c = g.with_units(p->base, kept_units(i));
    if (!c) return c;
    // Polygraphy freezes every dangling value that is not one of the new graph inputs.
    const auto& inputs = g.graph().nodes[p->units[i]].inputs;
    const std::unordered_set<std::string> new_inputs(inputs.begin(), inputs.end());
    c->frozen.clear();
    for (auto& v : g.cut_values(*c))
      if (!new_inputs.count(v)) c->frozen.push_back(std::move(v));
    std::sort(c->frozen.begin(), c->frozen.end());
    return c;
  };
  phase->size = [kept_units](size_t i) { return kept_units(i).size(); };
  return start_phase(g, std::move(phase), bisect, true);
}

}  // namespace

PassStatePtr start_polygraphy_bisect_outputs(const ReductionGraph& g, const Candidate& best, const Facts&) {
  return start_outputs(g, best, true);
}
PassStatePtr start_polygraphy_bisect_inputs(const ReductionGraph& g, const Candidate& best, const Facts&) {
  return start_inputs(g, best, true);
}
PassStatePtr start_polygraphy_linear_outputs(const ReductionGraph& g, const Candidate& best, const Facts&) {
  return start_outputs(g, best, false);
}
PassStatePtr start_polygraphy_linear_inputs(const ReductionGraph& g, const Candidate& best, const Facts&) {
  return start_inputs(g, best, false);
}

Strategy build_polygraphy_bisect(const ReduceOptions&) {
  return {{{"polygraphy-outputs", &start_polygraphy_bisect_outputs}, {"polygraphy-inputs", &start_polygraphy_bisect_inputs}}};
}

Strategy build_polygraphy_linear(const ReduceOptions&) {
  return {{{"polygraphy-outputs", &start_polygraphy_linear_outputs}, {"polygraphy-inputs", &start_polygraphy_linear_inputs}}};
}

}  // namespace reduce::detail
