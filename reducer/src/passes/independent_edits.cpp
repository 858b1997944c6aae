// Independent edits of the best candidate (freeze a value, fill a weight, drop an attribute): all
// at once, else each alone, then the ones that kept the failure, accumulated greedily.
#include <map>

#include "passes.h"

namespace reduce::detail {

namespace {
// Greedy accumulation over the edits that kept the failure alone: first all of them together,
// else add them one by one in order, keeping each that still fails with those accepted before.
struct Accumulation {
  bool together = true;
  size_t next = 1;                 // index into the successes of the edit tried next
  std::vector<size_t> accepted;    // edits accepted so far (the first success, alone)
};
}  // namespace

bool commit_independent_edits(Reduction& r, size_t count, const EditApplier& apply) {
  if (count == 0 || r.stopped()) return false;
  const Candidate base = r.best();
  std::vector<size_t> all(count);
  for (size_t k = 0; k < count; ++k) all[k] = k;
  // Usually none of them matters: one check decides.
  if (auto every = apply(base, all); every && r.test_one(*every)) return r.commit(std::move(*every));
  if (count == 1 || r.stopped()) return false;
  // Each alone against the same base, tested at once (the walk does not depend on -j: every
  // answer is asked for).
  const auto answers = r.all_interesting(count, [&](size_t k) { return apply(base, {k}); });
  if (r.stopped()) return false;
  std::vector<size_t> kept;
  for (size_t k = 0; k < count; ++k)
    if (answers[k]) kept.push_back(k);
  if (kept.empty()) return false;
  if (kept.size() == 1) return r.commit(*apply(base, kept));
  // Probes name edit sets; with several jobs decide() tests the next levels of the greedy
  // walk together.
  std::vector<std::vector<size_t>> sets;
  std::map<std::vector<size_t>, size_t> ids;
  auto id = [&](std::vector<size_t> set) {
    std::sort(set.begin(), set.end());
    const auto [it, added] = ids.emplace(set, sets.size());
    if (added) sets.push_back(std::move(set));
    return it->second;
  };
  auto with_next = [&](const Accumulation& s) {
    auto set = s.accepted;
    set.push_back(kept[s.next]);
    return set;
  };
  const Accumulation end = r.decide<Accumulation>(
      Accumulation{true, 1, {kept.front()}},
      [&](const Accumulation& s) -> std::optional<size_t> {
        if (s.together) return id(kept);
        if (s.next >= kept.size()) return std::nullopt;
        return id(with_next(s));
      },
      [&](const Accumulation& s, bool interesting) {
        Accumulation t = s;
        if (s.together) {
          t.together = false;
          if (interesting) {
            t.accepted = kept;
            t.next = kept.size();
          }
          return t;
        }
        if (interesting) t.accepted = with_next(s);
        ++t.next;
        return t;
      },
      [&](size_t p) { return apply(base, sets[p]); });
  if (r.stopped()) return false;
  return r.commit(*apply(base, end.accepted));
}

}  // namespace reduce::detail
