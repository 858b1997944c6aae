// Baseline strategies next to the default passes, on the same Reduction (same test, same counts).
#pragma once

#include "../reduction.h"

namespace reduce::detail {

// Polygraphy `debug reduce`: find the earliest node whose outputs still fail (outputs marked,
// ancestors kept), then on that model the latest node whose inputs still fail (inputs cut there,
// other dangling values frozen). `bisect` is its default mode, else `linear` (every node tried,
// the failing model with fewest nodes wins).
void run_polygraphy_outputs(Reduction& r, bool bisect);
void run_polygraphy_inputs(Reduction& r, bool bisect);

// Zeller's ddmin over single nodes (subsets, then complements, doubling granularity). Returns
// whether it ran to completion (its result is then 1-minimal).
bool run_ddmin(Reduction& r);

}  // namespace reduce::detail
