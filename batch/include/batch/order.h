// The order in which `reduce batch` reduces its rows.
#pragma once

#include <cstddef>
#include <vector>

#include "batch/summary.h"

namespace reduce {

// The rows to reduce now (those not already done), by index. On one host in manifest order; spread
// over the ranks of an MPI job, largest model file first (ties in manifest order): the longest
// reductions start first, so no rank is left with a big one at the end while the others idle. A
// model whose size cannot be read comes first (it fails at once).
std::vector<size_t> reduction_order(const std::vector<BatchRow>& rows, bool spread_over_ranks);

}  // namespace reduce
