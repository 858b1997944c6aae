// first-divergence: with intermediate values marked as outputs, find the first node whose output
// already fails; keep that node and its ancestors.
#include <unordered_map>

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

// The search as one decision process, so that with several jobs the check of the fully marked
// model and the next probes are tested together.
struct Search {
  enum Stage { Unverified, Bisecting, Hinted, Hidden } stage = Unverified;
  size_t first = 0, last = 0;  // bisecting: the first failing prefix end is in [first, last]
  Gallop hinted;               // hinted: over the positions whose values failed
};
}  // namespace

void run_first_divergence(Reduction& r) {
  if (r.marking_outputs_hides_failure) return;
  const auto units = r.units();
  const size_t n = units.size();
  if (n <= 1) return;
  const Candidate base = r.best();
  // Marking outputs can break fusions the failure needs; then layerwise answers mean nothing.
  // Probe n - 1 is the fully marked model. When its check says which values failed, the first
  // failing prefix is among their positions: galloping from the first of them usually ends at
  // once. Otherwise (a crash, an error) bisection looks for the first failing p < n - 1.
  const auto full = marked_prefix(r, base, units, n - 1);
  // Unit positions with a failing value, ascending; set once the full check's answer brought them.
  std::optional<std::vector<size_t>> failing;
  auto has_hint = [&]() {
    if (!failing && full)
      if (const auto* names = r.failing_outputs(*full)) {
        std::unordered_map<std::string, size_t> position;
        for (size_t i = 0; i < n; ++i)
          for (auto& o : r.node_outputs(units[i])) position.emplace(std::move(o), i);
        failing.emplace();
        for (const auto& name : *names)
          if (auto it = position.find(name); it != position.end()) failing->push_back(it->second);
        std::sort(failing->begin(), failing->end());
        failing->erase(std::unique(failing->begin(), failing->end()), failing->end());
      }
    return failing && !failing->empty();
  };
  auto answer = [&](const Search& s) {
    if (s.stage != Search::Hinted) return s.first;
    return s.hinted.first < failing->size() ? (*failing)[s.hinted.first] : n - 1;
  };
  auto narrowed = [&](size_t k) -> std::optional<Candidate> {
    auto c = r.with_units(base, r.ancestors_within(base, units[k]));
    if (!c || c->nodes.size() >= base.nodes.size()) return std::nullopt;
    c->outputs = r.node_outputs(units[k]);
    return c;
  };
  const Search end = r.decide<Search>(
      Search{Search::Unverified, 0, n - 1, {}},
      [&](const Search& s) -> std::optional<size_t> {
        switch (s.stage) {
          case Search::Unverified: return n - 1;
          case Search::Hidden: return std::nullopt;
          case Search::Hinted:
            if (const auto p = s.hinted.probe()) return (*failing)[*p];
            return std::nullopt;
          case Search::Bisecting:
            if (s.first >= s.last) return std::nullopt;
            return s.first + (s.last - s.first) / 2;
        }
        return std::nullopt;
      },
      [&](const Search& s, bool interesting) -> Search {
        Search t = s;
        if (s.stage == Search::Unverified) {
          // The hint is known once the answer is (the walk); while a tree of probes is being
          // planned it is not yet, and bisection is the guess.
          if (!interesting) t.stage = Search::Hidden;
          else if (has_hint()) t = Search{Search::Hinted, 0, n - 1, Gallop::over(failing->size())};
          else t.stage = Search::Bisecting;
          return t;
        }
        if (s.stage == Search::Hinted) {
          t.hinted = s.hinted.advance(interesting);
          return t;
        }
        const size_t mid = s.first + (s.last - s.first) / 2;
        if (interesting) t.last = mid;
        else t.first = mid + 1;
        return t;
      },
      [&](size_t p) { return marked_prefix(r, base, units, p); }, {},
      [&](const Search& s) {
        // What comes next: the narrowed candidate, then what the next passes test first on it
        // (output-cut has nothing to do there; input-cut starts with the node alone).
        std::vector<Candidate> next;
        if (s.stage != Search::Bisecting && s.stage != Search::Hinted) return next;
        if (auto c = narrowed(answer(s))) {
          next = r.predict_after([&] {
            r.commit(*c);
            r.single_sink = r.best();
          });
          next.insert(next.begin(), std::move(*c));
        }
        return next;
      },
      // Half the slots for the first probes: the other half takes what a prefetch started for
      // output-cut, which runs next when marking outputs hides the failure.
      std::max<size_t>(1, static_cast<size_t>(r.jobs()) / 2));
  if (r.stopped()) return;
  if (end.stage == Search::Hidden) {
    r.marking_outputs_hides_failure = true;
    r.log("first-divergence: marking intermediate outputs hides the failure (fusion-dependent?); pass disabled");
    return;
  }
  const size_t k = answer(end);
  // The diverging node with its ancestors and only its own outputs; else the marked prefix.
  auto narrow = narrowed(k);
  if (narrow && r.test_one(*narrow)) {
    r.commit(std::move(*narrow));
    // Output-cut would look for an earlier node whose ancestors fail: the search just
    // showed that no earlier prefix does.
    r.single_sink = r.best();
  } else if (k + 1 < n) {
    r.commit(std::move(*marked_prefix(r, base, units, k)));
  }
}

}  // namespace reduce::detail
