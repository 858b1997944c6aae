// Reduction: candidate-building helpers, speculative bisection, commits and progress.
#include "reduction.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "core/graph_algorithms.h"

namespace reduce::detail {

Reduction::Reduction(const Model& model, GraphIndex index, CandidateTest& test, const ReduceOptions& options,
                     Candidate start)
    : model_(&model),
      index_(std::move(index)),
      options_(&options),
      unit_(model.graph.nodes.size(), false),
      initializers_(index_initializers(model.graph)),
      best_(std::move(start)),
      runner_(test, model.graph.nodes.size(), options.jobs, options.stop,
              [this](const Candidate& c, TestOutcome outcome, bool cache_hit) {
                if (options_->verbose)
                  verbose(std::string("check: ") + to_string(outcome) + (cache_hit ? " (cached)" : "") + " " +
                          describe(*this, c));
                report_progress();
              },
              options.on_wait),
      start_time_(std::chrono::steady_clock::now()) {
  bool any = false;
  for (size_t i = 0; i < unit_.size(); ++i) any |= unit_[i] = !is_constant_node(model.graph.nodes[i]);
  if (!any) std::fill(unit_.begin(), unit_.end(), true);  // a graph of constants: they are the units
}

std::vector<size_t> Reduction::units_of(const Candidate& c) const {
  std::vector<size_t> out;
  for (size_t n : c.nodes)
    if (unit_[n]) out.push_back(n);
  std::sort(out.begin(), out.end(),
            [&](size_t a, size_t b) { return index_.topological_position(a) < index_.topological_position(b); });
  return out;
}

std::optional<Candidate> Reduction::with_units(const Candidate& base, std::vector<size_t> units) const {
  if (units.empty()) return std::nullopt;
  std::vector<bool> kept(unit_.size(), false);
  for (size_t u : units) {
    kept[u] = true;
    for (size_t p : index_.predecessors(u))
      if (!unit_[p]) kept[p] = true;
  }
  Candidate c;
  for (size_t i = 0; i < kept.size(); ++i)
    if (kept[i]) c.nodes.push_back(i);

  // When the base feeds every cut value as a constant (the failure needed it), values newly cut
  // are frozen too; otherwise frozen values carry over while they are still cut.
  const SubgraphBoundary bounds = boundary(c);
  const auto cuts = bounds.cut_values();
  const bool freeze_all = !base.frozen.empty() && base.frozen.size() == cut_values(base).size();
  const std::unordered_set<std::string_view> cut_set(cuts.begin(), cuts.end());
  if (freeze_all) {
    c.frozen = cuts;
    std::sort(c.frozen.begin(), c.frozen.end());
  } else {
    for (const auto& f : base.frozen)
      if (cut_set.count(f)) c.frozen.push_back(f);
  }
  for (const auto& o : base.outputs) {
    const auto p = index_.producer(o);
    if (p && kept[*p]) c.outputs.push_back(o);
  }
  if (!base.filled.empty()) {
    std::unordered_set<std::string_view> read;
    for (size_t n : c.nodes)
      for (const auto& v : graph().nodes[n].inputs) read.insert(v);
    for (const auto& [name, value] : base.filled)
      if (read.count(name)) c.filled.emplace(name, value);
  }
  for (const auto& d : base.dropped_attributes)
    if (kept[d.first]) c.dropped_attributes.push_back(d);
  if (!base.input_shapes.empty()) {
    const auto inputs = bounds.inputs();
    const std::unordered_set<std::string_view> input_set(inputs.begin(), inputs.end());
    for (const auto& [name, shape] : base.input_shapes)
      if (input_set.count(name)) c.input_shapes.emplace(name, shape);
  }
  return c;
}

std::vector<std::string> Reduction::node_outputs(size_t node) const {
  std::vector<std::string> out;
  for (const auto& o : graph().nodes[node].outputs)
    if (!o.empty()) out.push_back(o);
  return out;
}

size_t Reduction::bisect_first(size_t count, const CandidateMaker& make,
                               const std::function<std::vector<Candidate>(size_t)>& after) {
  using Range = std::pair<size_t, size_t>;  // the answer is in [first, second]
  const Range end = decide<Range>(
      {0, count},
      [](const Range& r) -> std::optional<size_t> {
        if (r.first >= r.second) return std::nullopt;
        return r.first + (r.second - r.first) / 2;
      },
      [](const Range& r, bool interesting) -> Range {
        const size_t mid = r.first + (r.second - r.first) / 2;
        return interesting ? Range{r.first, mid} : Range{mid + 1, r.second};
      },
      make, {},
      after ? std::function<std::vector<Candidate>(const Range&)>([&](const Range& r) { return after(r.first); })
            : std::function<std::vector<Candidate>(const Range&)>());
  return stopped() ? count : end.first;
}

Gallop Gallop::over(size_t count) {
  Gallop g;
  g.last = count;
  while (g.reach * g.reach < count) ++g.reach;
  return g;
}

std::optional<size_t> Gallop::probe() const {
  if (galloping && (first == 0 || 2 * first - 1 <= reach)) return std::min(last - 1, first == 0 ? 0 : 2 * first - 1);
  if (first >= last) return std::nullopt;
  return first + (last - first) / 2;
}

Gallop Gallop::advance(bool interesting) const {
  const size_t p = *probe();
  const bool galloped = galloping && (first == 0 || 2 * first - 1 <= reach);
  Gallop g = *this;
  if (interesting) {
    g.last = p;
    g.galloping = false;
  } else {
    g.first = p + 1;
    g.galloping = galloped && p + 1 < last;
  }
  return g;
}

size_t Reduction::gallop_first(size_t count, const CandidateMaker& make,
                               const std::function<std::vector<Candidate>(size_t)>& after) {
  if (count == 0) return 0;
  const Gallop end = decide<Gallop>(
      Gallop::over(count), [](const Gallop& g) { return g.probe(); },
      [](const Gallop& g, bool interesting) { return g.advance(interesting); }, make, {},
      after ? std::function<std::vector<Candidate>(const Gallop&)>([&](const Gallop& g) { return after(g.first); })
            : std::function<std::vector<Candidate>(const Gallop&)>());
  return stopped() ? count : end.first;
}

std::vector<size_t> Reduction::ancestors_within(const Candidate& c, size_t unit) const {
  std::vector<bool> kept(unit_.size(), false);
  for (size_t n : c.nodes) kept[n] = true;
  const auto reached = ancestors(index_, std::span<const size_t>(&unit, 1), kept);
  std::vector<size_t> out;
  for (size_t n : index_.topological_order())
    if (reached[n] && unit_[n]) out.push_back(n);
  return out;
}

const ValueType* Reduction::type_of(const std::string& value) {
  if (!types_inferred_) {
    types_inferred_ = true;
    auto types = infer_value_types(*model_);
    if (types) types_ = std::move(types).value();
    else log("shape inference failed (" + types.error().message() + "): input shapes are unknown");
  }
  auto it = types_.find(value);
  return it == types_.end() ? nullptr : &it->second;
}

std::vector<Candidate> Reduction::predicted(const std::function<void()>& steps, size_t limit) {
  const Candidate best = best_;
  const size_t commits = commits_;
  const bool hides = marking_outputs_hides_failure;
  const auto single = single_sink;
  const std::string pass = pass_;
  std::vector<Candidate> out;
  ++predicting_;
  auto outer = runner_.set_dry(&out, limit);
  steps();
  runner_.end_dry(std::move(outer));
  --predicting_;
  best_ = best;
  commits_ = commits;
  marking_outputs_hides_failure = hides;
  single_sink = single;
  pass_ = pass;
  return out;
}

void Reduction::prefetch(const std::function<void()>& steps) {
  if (jobs() == 1 || predicting_ > 0 || stopped()) return;
  // As many as there are slots: the ones that find their slot busy queue for it. (Listing more,
  // e.g. four per job, lets the confirming round's checks pass the invalid candidates of
  // fill-weights and drop-attributes, but with an engine that computes on the local cores the
  // speculative checks of large candidates then compete with the checks that matter: a
  // 10 000-node reduction at -j 16 on 2 cores took 8.9 s instead of 3.1 s.)
  auto candidates = predicted(steps, static_cast<size_t>(jobs()));
  if (!candidates.empty()) verbose("prefetch: " + std::to_string(candidates.size()) + " candidates");
  runner_.speculate(candidates, true);
}

std::vector<Candidate> Reduction::predict_after(const std::function<void()>& outcome) {
  // A follow-up prediction may predict once more (what follows an end inside the predicted
  // pass), not deeper; a prefetch (which runs its passes to the end anyway) not at all.
  if (jobs() == 1 || predicting_ > follow_up_predictions_ || follow_up_predictions_ > 1 || runner_.stopped() ||
      passes_.empty())
    return {};
  ++follow_up_predictions_;
  const size_t next = current_ + 1;
  auto out = predicted(
      [&] {
        outcome();
        if (!stopped()) run_from(next);
      },
      static_cast<size_t>(jobs()));
  --follow_up_predictions_;
  return out;
}

void Reduction::run_pass(size_t k) {
  const size_t current = current_;
  current_ = k;
  passes_[k](*this);
  current_ = current;
}

void Reduction::run_from(size_t k) {
  for (size_t j = k; j < passes_.size() && !stopped(); ++j) run_pass(j);
  for (size_t j = 0; j < passes_.size() && !stopped(); ++j) run_pass(j);
}

std::vector<Candidate> Reduction::follow_ups(std::optional<Candidate> committed) {
  auto next = predict_after([&] {
    if (committed) commit(*committed);
  });
  if (committed) next.insert(next.begin(), std::move(*committed));
  return next;
}

bool Reduction::commit(Candidate c) {
  if (c == best_) return false;
  if (predicting_ > 0) {
    best_ = std::move(c);
    ++commits_;
    return true;
  }
  const size_t before = size();
  best_ = std::move(c);
  ++commits_;
  if (options_->on_improvement) options_->on_improvement(best_);
  const size_t after = size();
  if (after != before)
    log(pass_ + ": " + std::to_string(before) + " -> " + std::to_string(after) + " nodes");
  else
    log(pass_ + ": simplified (" + std::to_string(after) + " nodes)");
  report_progress();
  return true;
}

void Reduction::set_pass(std::string name) {
  pass_ = std::move(name);
  if (predicting_ > 0) return;
  report_progress();
}

double Reduction::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time_).count();
}

void Reduction::log(const std::string& line) const {
  if (predicting_ == 0 && options_->log) options_->log(line);
}

void Reduction::verbose(const std::string& line) const {
  if (options_->verbose) log(line);
}

void Reduction::report_progress() const {
  if (!options_->on_progress) return;
  ReduceProgress p;
  p.size = size();
  p.checks = counts().checks;
  p.cache_hits = counts().cache_hits;
  p.elapsed = elapsed();
  p.rate = p.elapsed > 0 ? static_cast<double>(p.checks) / p.elapsed : 0;
  p.pass = pass_;
  options_->on_progress(p);
}

std::string describe(const Reduction& r, const Candidate& c) {
  std::map<std::string, size_t> ops;
  size_t n = 0;
  for (size_t i : c.nodes)
    if (r.is_unit(i)) {
      ++ops[r.graph().nodes[i].op_type];
      ++n;
    }
  std::string s = std::to_string(n) + " nodes";
  if (n <= 8) {
    s += " [";
    bool first = true;
    for (size_t i : c.nodes)
      if (r.is_unit(i)) {
        s += (first ? "" : " ") + r.graph().nodes[i].name + ":" + r.graph().nodes[i].op_type;
        first = false;
      }
    s += "]";
  } else {
    s += " (";
    bool first = true;
    for (const auto& [op, k] : ops) {
      s += (first ? "" : ", ") + op + " " + std::to_string(k);
      first = false;
    }
    s += ")";
  }
  if (!c.outputs.empty()) s += ", " + std::to_string(c.outputs.size()) + " marked outputs";
  if (!c.frozen.empty()) s += ", " + std::to_string(c.frozen.size()) + " frozen";
  if (!c.input_shapes.empty()) s += ", " + std::to_string(c.input_shapes.size()) + " reshaped inputs";
  if (!c.filled.empty()) s += ", " + std::to_string(c.filled.size()) + " filled weights";
  if (!c.dropped_attributes.empty()) s += ", " + std::to_string(c.dropped_attributes.size()) + " dropped attributes";
  return s;
}

}  // namespace reduce::detail
