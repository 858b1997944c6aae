// Independent edits of the best candidate (freeze a value, fill a weight, drop an attribute): all
// at once, else each alone, then the ones that kept the failure together.
#include "passes.h"

namespace reduce::detail {

bool commit_independent_edits(Reduction& r, size_t count, const EditApplier& apply) {
  if (count == 0 || r.stopped()) return false;
  const Candidate base = r.best();
  std::vector<size_t> all(count);
  for (size_t k = 0; k < count; ++k) all[k] = k;
  // Usually none of them matters: one check decides.
  if (auto every = apply(base, all); every && r.test_one(*every)) return r.commit(std::move(*every));
  if (count == 1 || r.stopped()) return false;
  // Each alone against the same base, tested at once (the walk does not depend on -j: every
  // answer is asked for), then the successes together.
  const auto answers = r.all_interesting(count, [&](size_t k) { return apply(base, {k}); });
  if (r.stopped()) return false;
  std::vector<size_t> kept;
  for (size_t k = 0; k < count; ++k)
    if (answers[k]) kept.push_back(k);
  if (kept.empty()) return false;
  if (kept.size() > 1)
    if (auto together = apply(base, kept); together && r.test_one(*together)) return r.commit(std::move(*together));
  return r.commit(*apply(base, {kept.front()}));
}

}  // namespace reduce::detail
