// first-divergence: with intermediate values marked as outputs, bisect the topological order for
// the first node whose output already fails; keep that node and its ancestors.
#include "passes.h"

namespace reduce::detail {

namespace {
// The first p+1 units (a topological prefix is closed under ancestors) with all their outputs marked.
std::optional<Candidate> marked_prefix(Reduction& r, const Candidate& base, const std::vector<size_t>& units, size_t p) {
  auto c = r.with_units(base, std::vector<size_t>(units.begin(), units.begin() + p + 1));
  if (!c) return c;
  c->outputs.clear();
  for (size_t i = 0; i <= p; ++i)
    for (auto& o : r.node_outputs(units[i])) c->outputs.push_back(std::move(o));
  return c;
}
}  // namespace

// The search as one decision process, so that with several jobs the check of the fully marked
// model and the first bisection levels are tested together.
struct Search {
  enum Stage { Unverified, Bisecting, Hidden } stage = Unverified;
  size_t first = 0, last = 0;  // bisecting: the first failing prefix end is in [first, last]
};

void run_first_divergence(Reduction& r) {
  if (r.marking_outputs_hides_failure) return;
  const auto units = r.units();
  const size_t n = units.size();
  if (n <= 1) return;
  const Candidate base = r.best();
  // Marking outputs can break fusions the failure needs; then layerwise answers mean nothing.
  // Probe n - 1 is the fully marked model; the bisection looks for the first failing p < n - 1.
  auto narrowed = [&](size_t k) -> std::optional<Candidate> {
    auto c = r.with_units(base, r.ancestors_within(base, units[k]));
    if (!c || c->nodes.size() >= base.nodes.size()) return std::nullopt;
    c->outputs = r.node_outputs(units[k]);
    return c;
  };
  const Search end = r.decide<Search>(
      Search{Search::Unverified, 0, n - 1},
      [n](const Search& s) -> std::optional<size_t> {
        if (s.stage == Search::Unverified) return n - 1;
        if (s.stage == Search::Hidden || s.first >= s.last) return std::nullopt;
        return s.first + (s.last - s.first) / 2;
      },
      [](const Search& s, bool interesting) -> Search {
        Search t = s;
        if (s.stage == Search::Unverified) {
          t.stage = interesting ? Search::Bisecting : Search::Hidden;
          return t;
        }
        const size_t mid = s.first + (s.last - s.first) / 2;
        if (interesting) t.last = mid;
        else t.first = mid + 1;
        return t;
      },
      [&](size_t p) { return marked_prefix(r, base, units, p); }, {},
      [&](const Search& s) {
        // What comes next: the narrowed candidate, then input-cut's first probe (the node alone).
        std::vector<Candidate> next;
        if (s.stage != Search::Bisecting) return next;
        if (auto c = narrowed(s.first)) {
          if (auto alone = r.with_units(*c, {units[s.first]}); alone && *alone != *c) next.push_back(*alone);
          next.insert(next.begin(), std::move(*c));
        }
        return next;
      });
  if (r.stopped()) return;
  if (end.stage == Search::Hidden) {
    r.marking_outputs_hides_failure = true;
    r.log("first-divergence: marking intermediate outputs hides the failure (fusion-dependent?); pass disabled");
    return;
  }
  const size_t k = end.first;
  // The diverging node with its ancestors and only its own outputs; else the marked prefix.
  auto narrow = narrowed(k);
  if (narrow && r.test_one(*narrow)) {
    r.commit(std::move(*narrow));
    // Output-cut would look for an earlier node whose ancestors fail: the bisection just
    // showed that no earlier prefix does.
    r.single_sink = r.best();
  } else if (k + 1 < n) {
    r.commit(std::move(*marked_prefix(r, base, units, k)));
  }
}

}  // namespace reduce::detail
