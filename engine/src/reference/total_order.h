// A total order over element values for the sorting ops (TopK, Unique): NaN sorts after every number and
// equals other NaNs, so std::sort and friends stay well-defined on any data.
#pragma once

#include <cmath>
#include <type_traits>

namespace reduce::ref {

// -1, 0 or 1 as a is before, equal to, or after b.
template <typename T>
int compare_total(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

}  // namespace reduce::ref
