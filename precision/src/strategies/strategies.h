// The search functions of strategies.def: each finds a set with which the model passes on every
// sample, once the checks before the search are done (keep_set_search.h).
#pragma once

#include <atomic>
#include <vector>

#include "../keep_set_search.h"

namespace reduce::detail {

// Each strategy of strategies.def: fills out.pinned (topological order), checks, after, one_minimal,
// stopped and seconds. samples[0] is the sample the model fails on.
#define PRECISION_STRATEGY(name, search, directed, help)                                                    \
  Status search(const std::vector<Oracle*>& samples, const KeepSetProblem& problem, const PrecisionOptions& options, \
                std::atomic<bool>& cancelled, PrecisionOutcome& out);
#include "strategies.def"
#undef PRECISION_STRATEGY

}  // namespace reduce::detail
