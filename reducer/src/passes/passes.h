// The default strategy's passes (declared from passes.def) and the removal loop they share.
#pragma once

#include <vector>

#include "../reduction.h"

namespace reduce::detail {

#define REDUCER_PASS(name, function, help) void function(Reduction& r);
#include "passes.def"
#undef REDUCER_PASS

// Tries removing each group of units in order, each against the best candidate at that point
// (llvm-reduce's chunk loop: the first interesting removal in order is committed, the scan goes
// on after it). Groups already gone are skipped. Returns whether anything was committed.
bool remove_groups(Reduction& r, const std::vector<std::vector<size_t>>& groups);

}  // namespace reduce::detail
