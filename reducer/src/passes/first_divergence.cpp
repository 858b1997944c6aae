// first-divergence: with intermediate values marked as outputs, find the first node whose output
// already fails; keep that node and its ancestors.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "passes.h"

namespace reduce::detail {

namespace {

// What the pass fixes at its start: the candidate, its units in topological order, its outputs.
struct Start {
  Candidate base;
  std::vector<size_t> units;
  ReductionGraph::ValueSet outputs;
};

// Units first..p (from 0: a topological prefix, closed under ancestors) with all their outputs
// marked, but a Q/DQ pair's quantized value, which only its DequantizeLinear nodes take; nullopt
// when that marks nothing (a pair's QuantizeLinear before its DequantizeLinear nodes shows nothing).
// From first > 0 the values they read from earlier units are cut, fed their recorded values.
std::optional<Candidate> marked_prefix(const ReductionGraph& g, const Start& s, size_t p, size_t first = 0) {
  auto c = g.with_units(s.base, std::vector<size_t>(s.units.begin() + static_cast<std::ptrdiff_t>(first),
                                                    s.units.begin() + static_cast<std::ptrdiff_t>(p + 1)));
  if (!c) return c;
  std::vector<std::string> outputs;
  for (size_t i = first; i <= p; ++i)
    if (ReductionGraph::keeps(*c, s.units[i]) && !g.quantizes_pair(s.units[i]))
      for (auto& o : g.node_outputs(s.units[i])) outputs.push_back(std::move(o));
  if (outputs.empty()) return std::nullopt;
  return g.marking(std::move(*c), std::move(outputs));
}

// The diverging node with its ancestors within `failed` (the failing prefix or window) and only its
// own outputs (none when the node is a pair's QuantizeLinear, which does not go without its
// DequantizeLinear nodes).
std::optional<Candidate> narrowed(const ReductionGraph& g, const Start& s, const Candidate& failed, size_t k) {
  auto c = g.with_units(s.base, g.ancestors_within(failed, s.units[k]));
  if (!c || c->nodes.size() >= s.base.nodes.size() || !ReductionGraph::keeps(*c, s.units[k]) || g.quantizes_pair(s.units[k]))
    return std::nullopt;
  return g.marking(std::move(*c), g.node_outputs(s.units[k]));
}

// Probe n - 1 is the fully marked model. When its check says which values failed, the first
// failing prefix is looked for among the positions where error is born (failing_positions):
// galloping from the first of them usually ends at once; when none fails, bisection looks after
// the last. Otherwise (a crash, an error; or a guessed answer) bisection looks for the first
// failing p < n - 1. Then the narrowed candidate is tried; when it does not fail, the marked
// prefix is kept. A narrowed candidate with the prefix's own nodes is left to input-cut, whose
// suffixes mark only the divergence's outputs.
// Marking outputs can break fusions the failure needs (the fully marked model passes). Then the
// prefixes are given only the values the rest of the candidate reads from them (frontier_prefix:
// every fusion within stays possible), and bisection looks for the first failing one among those
// ending on a node that can end a fusion; the whole candidate, the last of them, fails. This
// assumes less than output-cut's bisection over single nodes' ancestors: an error stays seen as
// long as any later node reads it, not only at one node (a saturating gate downstream does not
// hide it).
// Windows (issue 71): once a prefix is known to pass, the values up to its end are right, and a
// failure born after it shows in a window that starts there, the values it reads from the front
// cut and fed their recorded values (a window only where it is at most half the prefix, on
// candidates of kWindowUnits or more). So the candidates shrink from both ends: the engine builds
// about the model's size over the search, not log2(n) prefixes as long as the divergence's. A
// window whose cut splits the fusion a failure needs passes; the search then ends on the last
// candidate that failed, which held it. A window can also fail for its cut alone (a value the
// engine computed at build time fed as an input; inputs bound by position): so when the last
// failing candidate is a window, the model's own prefix ending at the same node is checked too,
// and when it passes the search goes on over prefixes after it. When no window fails though some
// passed (the failure needs the front's own values: error that accumulates from the start), the
// bisection runs again over prefixes. And the first value the check saw born wrong is tried alone
// before its prefix: usually it fails alone, and its prefix is never built.
class FirstDivergence : public PassState {
 public:
  // Windows from this many units: below, a window saves fewer nodes than its confirming check of
  // the prefix costs in a run (and a fused window carries up to 64 units before its cut).
  static constexpr size_t kWindowUnits = 4 * ReductionGraph::kFusionReach;

  enum Stage { Unverified, Bisecting, Hinted, Frontier, Verifying, Alone, Narrowing, Hidden, Done };

  FirstDivergence(std::shared_ptr<const Start> start, const ReductionGraph& g) : start_(std::move(start)) {
    bisect_ = Bisection::over(start_->units.size() - 1);
    windows_ = start_->units.size() >= kWindowUnits;
    settle(g);
  }

  const std::optional<Probe>& probe() const override { return probe_; }

  PassStatePtr advance(const ReductionGraph& g, const Answer& answer) const override {
    auto t = std::make_shared<FirstDivergence>(*this);
    switch (stage_) {
      case Unverified:
        if (answer.interesting) t->failed_ = t->failed_prefix_ = probe_->candidate;
        if (!answer.interesting) {
          t->stage_ = Frontier;
          t->frontier_ = fusion_positions(g);
          t->bisect_ = Bisection::over(t->frontier_->size());
        } else if (auto failing = failing_positions(g, answer); failing && !failing->empty()) {
          t->stage_ = Hinted;
          t->hinted_ = Gallop::over(failing->size());
          t->failing_ = std::make_shared<const std::vector<size_t>>(std::move(*failing));
        } else {
          t->stage_ = Bisecting;
        }
        break;
      case Bisecting:
      case Frontier:
        t->bisect_ = bisect_.advance(answer.interesting);
        t->record(answer.interesting, *bisect_.probe());
        break;
      case Verifying:
        t->stage_ = verifying_;
        t->failed_cut_ = false;
        if (!answer.interesting) t->abandon_windows();
        break;
      case Hinted:
        if (probing_alone_) {
          t->alone_tried_ = true;
          if (answer.interesting) {
            t->stage_ = Done;
            t->narrowed_ = probe_->candidate;
          }
          break;
        }
        t->hinted_ = hinted_.advance(answer.interesting);
        t->record(answer.interesting, *hinted_.probe());
        // The first hinted position did not fail alone: the hint says little about where the
        // divergence is (hinted_likely), so galloping's bet on a small answer no longer holds;
        // plain bisection of what is left costs log2 of it (bench/RESULTS.md, input_binding).
        if (!answer.interesting && hinted_.first == 0) t->hinted_.galloping = false;
        break;
      case Alone:
        if (answer.interesting) {
          t->stage_ = Done;
          t->narrowed_ = probe_->candidate;
        } else {
          t->stage_ = Narrowing;
          t->narrowing_ = true;
        }
        break;
      case Narrowing:
        t->stage_ = Done;
        if (answer.interesting) t->narrowed_ = probe_->candidate;
        else t->keep_prefix();
        break;
      case Hidden:
      case Done: break;
    }
    t->settle(g);
    return t;
  }

  std::optional<Candidate> result() const override { return result_; }
  void conclude(Facts& facts) const override {
    if (stage_ == Hidden || frontier_) facts.marking_outputs_hides_failure = true;
    // Output-cut would look for an earlier node whose ancestors fail: the search just showed
    // that no earlier prefix does, and, when the narrowed candidate did not fail, that the
    // divergence's own ancestors do not either.
    if (narrowed_) facts.single_sink = SingleSink{narrowed_->nodes, start_->units[divergence()]};
    else if (result_) facts.single_sink = SingleSink{result_->nodes, start_->units[divergence()]};
  }

 private:
  // Unit positions where the full check saw error born, ascending: a value found wrong whose node
  // reads no value found wrong (its inputs are right, or graph inputs and weights). The first
  // wrong value in topological order is always one; later ones are where an input-wide failure
  // (inputs bound in the wrong order) or a second fault shows, where the wrong values downstream
  // of the first only inherit its error and say nothing new.
  std::optional<std::vector<size_t>> failing_positions(const ReductionGraph& g, const Answer& answer) const {
    if (!answer.failing_outputs) return std::nullopt;
    std::unordered_map<std::string, size_t> position;
    for (size_t i = 0; i < start_->units.size(); ++i)
      for (auto& o : g.node_outputs(start_->units[i])) position.emplace(std::move(o), i);
    const std::unordered_set<std::string> wrong(answer.failing_outputs->begin(), answer.failing_outputs->end());
    const auto reads_wrong = [&](size_t unit) {
      const Node& node = g.graph().nodes[unit];
      const auto is_wrong = [&](const std::string& v) { return wrong.count(v) > 0; };
      return std::any_of(node.inputs.begin(), node.inputs.end(), is_wrong) ||
             std::any_of(node.implicit_inputs.begin(), node.implicit_inputs.end(), is_wrong);
    };
    std::vector<size_t> out;
    for (const auto& name : *answer.failing_outputs)
      if (auto it = position.find(name); it != position.end() && !reads_wrong(start_->units[it->second]))
        out.push_back(it->second);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  // The first hinted position is usually the divergence. Once it was not, the hint has shown that
  // values fail there only with later nodes present (an input-wide failure, a fusion), and says
  // little about where: speculation then guesses the answer uniform over what is left.
  double hinted_likely(size_t p) const {
    if (hinted_.first == 0) return 0.5;
    return static_cast<double>(p - hinted_.first + 1) / static_cast<double>(hinted_.last - hinted_.first + 1);
  }

  // Positions of the units that can end a fusion, but the last (the whole candidate).
  std::shared_ptr<const std::vector<size_t>> fusion_positions(const ReductionGraph& g) const {
    const auto ends = g.fusion_ends(start_->base);
    const std::unordered_set<size_t> ending(ends.begin(), ends.end());
    std::vector<size_t> positions;
    for (size_t i = 0; i + 1 < start_->units.size(); ++i)
      if (ending.count(start_->units[i])) positions.push_back(i);
    return std::make_shared<const std::vector<size_t>>(std::move(positions));
  }

  // Where the bisection's next candidate starts: after the last prefix known to pass (0: none).
  size_t front() const {
    if (!windows_ || bisect_.first == 0) return 0;
    return frontier_ ? (*frontier_)[bisect_.first - 1] + 1 : bisect_.first;
  }

  // Where a candidate ending at p starts, given the first position not known right: there when
  // that leaves at most half the prefix (the window's failure costs one check of the prefix to
  // confirm, so a window must save more than that), else 0.
  size_t start_of(size_t first, size_t p) const { return windows_ && 2 * first >= p + 1 ? std::min(first, p) : 0; }

  // The candidate ending at position p, as the search tests it: a prefix, or a window from front().
  std::optional<Candidate> prefix(const ReductionGraph& g, size_t p) const {
    const size_t first = start_of(front(), p);
    return frontier_ ? g.frontier_window(start_->base, start_->units, start_->outputs, first, p + 1) : marked_prefix(g, *start_, p, first);
  }

  // The narrowed candidate did not fail (or there was none): the failing prefix is the result.
  void keep_prefix() {
    if (divergence() + 1 < start_->units.size()) result_ = failed_;
  }


  // The first failing prefix end the search found.
  size_t divergence() const {
    if (frontier_) return bisect_.first < frontier_->size() ? (*frontier_)[bisect_.first] : start_->units.size() - 1;
    if (failing_)
      return hinted_.first < failing_->size() ? (*failing_)[hinted_.first] : start_->units.size() - 1;
    return bisect_.first;
  }

  // Sets probe_ for the stage, moving to the next stage where this one has nothing to ask.
  void settle(const ReductionGraph& g) {
    probe_.reset();
    probe_cut_ = false;
    probing_alone_ = false;
    const size_t n = start_->units.size();
    if (stage_ == Unverified) {
      if (auto c = marked_prefix(g, *start_, n - 1)) probe_ = Probe{std::move(*c), false, {}};
      else stage_ = Hidden;
      return;
    }
    if (stage_ == Hinted && settle_hinted(g)) return;
    if ((stage_ == Bisecting || stage_ == Frontier) && settle_bisection(g)) return;
    // No prefix but the whole candidate fails with only what the rest reads marked either.
    if (stage_ == Frontier && divergence() + 1 >= n) {
      stage_ = Hidden;
      return;
    }
    if (stage_ == Hinted || stage_ == Bisecting || stage_ == Frontier || stage_ == Narrowing) settle_narrowing(g);
  }

  // The gallop over hinted positions: the first alone, then prefixes (windows after one passed), the
  // confirming prefix; or on to bisection after the last. True when it set a probe.
  bool settle_hinted(const ReductionGraph& g) {
    // The first value seen born wrong alone (its inputs cut), before the prefix ending at it.
    if (hinted_.first == 0 && !alone_tried_ && !failing_->empty())
      if (auto alone = g.with_units(start_->base, {start_->units[(*failing_)[0]]}); alone && (*failing_)[0] > 0) {
        probe_ = Probe{g.marking(std::move(*alone), g.node_outputs(start_->units[(*failing_)[0]])), true, {}};
        probing_alone_ = true;
        return true;
      }
    // A prefix without a candidate is answered "not interesting" without a test.
    do {
      while (const auto p = hinted_.probe()) {
        const size_t first = hinted_.first > 0 ? start_of((*failing_)[hinted_.first - 1] + 1, (*failing_)[*p]) : 0;
        if (auto c = marked_prefix(g, *start_, (*failing_)[*p], first)) {
          probe_cut_ = first > 0;
          probe_ = Probe{std::move(*c), false, {}, hinted_likely(*p)};
          return true;
        }
        hinted_ = hinted_.advance(false);
      }
    } while (restart_over_prefixes());
    if (hinted_.first < failing_->size()) return verify(g);
    // No hinted prefix fails: the divergence is after the last value seen born wrong (the values
    // wrong only by inheritance were not hinted). Bisection finds it.
    stage_ = Bisecting;
    bisect_ = Bisection{failing_->back() + 1, start_->units.size() - 1};
    range_first_ = bisect_.first;
    prefix_hi_.reset();
    failing_.reset();
    return false;
  }

  // The bisection's next prefix or window, then the confirming prefix. True when it set a probe.
  bool settle_bisection(const ReductionGraph& g) {
    do {
      while (const auto p = bisect_.probe()) {
        const size_t end = frontier_ ? (*frontier_)[*p] : *p;
        if (auto c = prefix(g, end)) {
          probe_cut_ = start_of(front(), end) > 0;
          probe_ = Probe{std::move(*c), false, {}};
          return true;
        }
        bisect_ = bisect_.advance(false);
      }
    } while (restart_over_prefixes());
    return verify(g);
  }

  // The model's own prefix ending at the divergence, when the search ended on a window.
  bool verify(const ReductionGraph& g) {
    auto c = verification(g);
    if (!c) return false;
    verifying_ = stage_;
    stage_ = Verifying;
    probe_ = Probe{std::move(*c), false, {}};
    return true;
  }

  // The divergence found: the node alone or with its ancestors, or the failing prefix as it is.
  void settle_narrowing(const ReductionGraph& g) {
    stage_ = Narrowing;
    if (auto c = failed_ ? narrowed(g, *start_, *failed_, divergence()) : std::nullopt) {
      // A frontier prefix that is the divergence with its ancestors already failed as it is.
      const auto& failed = failed_;
      if (frontier_ && *c == failed) {
        narrowed_ = std::move(c);
        stage_ = Done;
        result_ = narrowed_;
        return;
      }
      // The same nodes with fewer outputs: input-cut's suffixes mark only the divergence's
      // outputs (Facts::single_sink), and the first that fails is narrowed already; a probe of
      // the narrowed candidate here would only come first.
      if (failed && c->nodes == failed->nodes && divergence() + 1 < start_->units.size()) {
        stage_ = Done;
        result_ = failed;
        return;
      }
      // The diverging node alone first (its inputs cut): when it fails, the narrowed candidate's
      // check buys nothing, and when it does not, input-cut's first suffix of the narrowed
      // candidate is this model, answered from the cache: one check fewer or none more.
      if (!frontier_ && !narrowing_ && g.size_of(*c) > 1 && !tried_alone(divergence()))
        if (auto alone = g.with_units(start_->base, {start_->units[divergence()]})) {
          stage_ = Alone;
          probe_ = Probe{g.marking(std::move(*alone), g.node_outputs(start_->units[divergence()])), true, {}};
          return;
        }
      probe_ = Probe{std::move(*c), true, {}};
      return;
    }
    stage_ = Done;
    keep_prefix();
  }

  // The positions the stage's search is over: hinted positions, or the bisection's (frontier ends,
  // or every unit but the last).
  size_t search_count() const {
    if (stage_ == Hinted) return failing_->size();
    return frontier_ ? frontier_->size() : start_->units.size() - 1;
  }

  // The search found no failing window but some passed: the failure needs the front's values.
  // It runs again over prefixes (those it asked already are answered from the cache).
  bool restart_over_prefixes() {
    const size_t found = stage_ == Hinted ? hinted_.first : bisect_.first;
    if (!windows_ || !cut_passed_ || found < search_count()) return false;
    windows_ = false;
    cut_passed_ = false;
    if (stage_ == Hinted) {
      hinted_ = Gallop::over(search_count());
      hinted_.galloping = false;
    } else {
      bisect_ = Bisection{range_first_, search_count()};
    }
    return true;
  }

  // What the answer to the probe (a prefix or a window, at the search's index `index`) says: the
  // last failing candidate, the last failing prefix, a window that passed.
  void record(bool interesting, size_t index) {
    if (interesting) {
      failed_ = probe_->candidate;
      failed_cut_ = probe_cut_;
      if (!probe_cut_) {
        failed_prefix_ = probe_->candidate;
        prefix_hi_ = index;
      }
    } else if (probe_cut_) {
      cut_passed_ = true;
    }
  }

  // The last window failed where the model's own prefix ending at the same node does not: an
  // artifact of its cut (a value the engine computed at build time fed as an input, inputs bound
  // by position). That prefix passing puts the divergence after it (prefixes fail from the
  // divergence on), before the last prefix seen failing: the search goes on there over prefixes.
  void abandon_windows() {
    windows_ = false;
    cut_passed_ = false;
    failed_ = failed_prefix_;
    const size_t hi = prefix_hi_.value_or(search_count());
    if (stage_ == Hinted) {
      hinted_.first = std::min(hinted_.first + 1, hi);
      hinted_.last = hi;
      hinted_.galloping = false;
    } else {
      bisect_ = Bisection{std::min(bisect_.first + 1, hi), hi};
    }
  }

  // The last failing candidate was a window: the model's own prefix ending at the divergence must
  // fail too, or the window's failure is the cut's, not the model's. That prefix, or nullopt.
  std::optional<Candidate> verification(const ReductionGraph& g) const {
    if (!failed_cut_ || divergence() + 1 >= start_->units.size()) return std::nullopt;
    return frontier_ ? g.frontier_prefix(start_->base, start_->units, start_->outputs, divergence() + 1) : marked_prefix(g, *start_, divergence());
  }


  // The node at position k was tried alone already (the first value seen born wrong).
  bool tried_alone(size_t k) const { return alone_tried_ && failing_ && !failing_->empty() && (*failing_)[0] == k; }

  std::shared_ptr<const Start> start_;
  Stage stage_ = Unverified;
  Bisection bisect_;
  Gallop hinted_;
  std::shared_ptr<const std::vector<size_t>> failing_;
  // Set once the fully marked model passed: the positions the frontier search is over.
  std::shared_ptr<const std::vector<size_t>> frontier_;
  std::optional<Probe> probe_;
  std::optional<Candidate> result_, narrowed_;
  // The diverging node alone did not fail: the narrowed candidate is next.
  bool narrowing_ = false;
  // The last candidate of the search that failed (the fully marked model first), whether it is a
  // window with a cut front, and the last failing one that was not.
  std::optional<Candidate> failed_, failed_prefix_;
  bool failed_cut_ = false;
  // The stage a verification returns to.
  Stage verifying_ = Bisecting;
  // The search's index of that last failing prefix (none: the whole candidate).
  std::optional<size_t> prefix_hi_;
  // Windows: whether the bisection's candidates start after the last prefix known to pass; whether
  // one that did (a cut front) passed; where the bisection's range starts.
  bool windows_ = true, cut_passed_ = false;
  size_t range_first_ = 0;
  // The probe is a window with a cut front; the first value seen born wrong, alone.
  bool probe_cut_ = false, probing_alone_ = false;
  // That one was tried.
  bool alone_tried_ = false;
};

}  // namespace

PassStatePtr start_first_divergence(const ReductionGraph& g, const Candidate& best, const Facts& facts) {
  if (facts.marking_outputs_hides_failure) return nullptr;
  auto start = std::make_shared<Start>(Start{best, g.units_of(best), {}});
  // On two units the only smaller prefix, the first unit alone, is one of certify's removals
  // (which always runs): the fully marked model's check would buy nothing certify does not.
  if (start->units.size() <= 2) return nullptr;
  start->outputs = g.output_set(best);
  return std::make_shared<FirstDivergence>(std::move(start), g);
}

}  // namespace reduce::detail
