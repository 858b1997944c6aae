// Independent edits of the best candidate (freeze a value, fill a weight, drop an attribute): all
// at once, else accumulated greedily in order.
#include <map>

#include "passes.h"

namespace reduce::detail {

namespace {
// All edits together, else each added in order while the failure survives with those accepted
// before it.
struct Accumulation {
  bool together = true;
  size_t next = 0;                 // the edit tried next
  std::vector<size_t> accepted;    // edits accepted so far
};
}  // namespace

bool commit_independent_edits(Reduction& r, size_t count, const EditApplier& apply) {
  if (count == 0 || r.stopped()) return false;
  const Candidate base = r.best();
  std::vector<size_t> all(count);
  for (size_t k = 0; k < count; ++k) all[k] = k;
  // Probes name edit sets; with several jobs decide() tests the next levels of the walk together
  // (usually none of the edits matters and the first probe, all of them, decides).
  std::vector<std::vector<size_t>> sets;
  std::map<std::vector<size_t>, size_t> ids;
  auto id = [&](std::vector<size_t> set) {
    const auto [it, added] = ids.emplace(set, sets.size());
    if (added) sets.push_back(std::move(set));
    return it->second;
  };
  auto with_next = [&](const Accumulation& s) {
    auto set = s.accepted;
    set.push_back(s.next);  // ascending: edits are tried in order
    return set;
  };
  auto result = [&](const Accumulation& s) { return s.accepted.empty() ? std::nullopt : apply(base, s.accepted); };
  const Accumulation end = r.decide<Accumulation>(
      Accumulation{},
      [&](const Accumulation& s) -> std::optional<size_t> {
        if (s.together) return id(all);
        // The last edit would complete the set already tried together (and refused).
        if (s.next >= count || (s.next + 1 == count && s.accepted.size() + 1 == count)) return std::nullopt;
        return id(with_next(s));
      },
      [&](const Accumulation& s, bool interesting) {
        Accumulation t = s;
        if (s.together) {
          t.together = false;
          if (interesting) {
            t.accepted = all;
            t.next = count;
          }
          return t;
        }
        if (interesting) t.accepted = with_next(s);
        ++t.next;
        return t;
      },
      [&](size_t p) { return apply(base, sets[p]); }, {},
      [&](const Accumulation& s) { return r.follow_ups(result(s)); });
  if (r.stopped()) return false;
  auto chosen = result(end);
  return chosen && r.commit(std::move(*chosen));
}

}  // namespace reduce::detail
