// The removal loop shared by node-removal and certify: first success in order wins, scan goes on.
#include <unordered_set>

#include "passes.h"

namespace reduce::detail {

namespace {

// `base` without the units of `group`; nullopt when the group is already gone or nothing is left.
std::optional<Candidate> without(const Reduction& r, const Candidate& base, const std::vector<size_t>& group) {
  const std::unordered_set<size_t> drop(group.begin(), group.end());
  const auto units = r.units_of(base);
  std::vector<size_t> keep;
  for (size_t u : units)
    if (!drop.count(u)) keep.push_back(u);
  if (keep.size() == units.size()) return std::nullopt;
  return r.with_units(base, std::move(keep));
}

}  // namespace

// Sequentially: group i is tried against the best candidate at that point and committed when
// interesting. In parallel, llvm-reduce's scheme (all in flight against the same base, the first
// success wins, later ones are redone) serializes on every success. Here a window of `jobs`
// candidates is built predicting each earlier removal's answer (the last answer seen for that
// group against any base, else the running success rate): candidate j assumes the predicted
// commits before it. The walk then follows the sequential order and takes only answers for
// exactly the candidates the sequence asks for, so the result never depends on -j; with -j 1 the
// window is the sequential candidate itself.
bool remove_groups(Reduction& r, const std::vector<std::vector<size_t>>& groups) {
  bool changed = false;
  size_t i = 0;
  size_t tried = 2, succeeded = 1;  // a prior of one half
  std::vector<signed char> last_answer(groups.size(), -1);
  while (i < groups.size() && !r.stopped()) {
    const size_t width = std::min(groups.size() - i, static_cast<size_t>(r.jobs()));
    std::vector<std::optional<Candidate>> window;
    Candidate predicted = r.best();
    for (size_t j = 0; j < width; ++j) {
      window.push_back(without(r, predicted, groups[i + j]));
      const bool guess = last_answer[i + j] >= 0 ? last_answer[i + j] == 1 : 2 * succeeded > tried;
      if (window.back() && guess) predicted = *window.back();
    }
    const auto answers = r.all_interesting(width, [&](size_t j) { return window[j]; });
    for (size_t j = 0; j < width; ++j)
      if (window[j]) last_answer[i + j] = answers[j] ? 1 : 0;
    // Walk in sequential order while the answer to the exact sequential candidate is known.
    while (i < groups.size() && !r.stopped()) {
      const auto c = without(r, r.best(), groups[i]);
      if (!c) { ++i; continue; }
      const auto known = r.known_interesting(*c);
      if (!known) break;
      ++tried;
      if (*known) {
        ++succeeded;
        r.commit(*c);
        changed = true;
      }
      ++i;
    }
  }
  return changed;
}

}  // namespace reduce::detail
