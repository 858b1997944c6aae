// Galloping search (pass.h): exponential steps from 0 while they stay below sqrt(count) (or count), then bisection.
#include "pass.h"

namespace reduce::detail {

Gallop Gallop::over(size_t count) {
  Gallop g;
  g.last = count;
  while (g.reach * g.reach < count) ++g.reach;
  return g;
}

Gallop Gallop::doubling(size_t count) {
  Gallop g;
  g.last = count;
  g.reach = count;
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

}  // namespace reduce::detail
