// Baseline strategies next to the default passes, as passes on the same scheduler (same test,
// same counts).
#pragma once

#include "../pass.h"
#include "../scheduler.h"

namespace reduce::detail {

// Each strategy of strategies.def: its passes for these options.
#define REDUCER_STRATEGY(name, build, offered, help) Strategy build(const ReduceOptions& options);
#include "strategies.def"
#undef REDUCER_STRATEGY

// Polygraphy `debug reduce`: find the earliest node whose outputs still fail (outputs marked,
// ancestors kept), then on that model the latest node whose inputs still fail (inputs cut there,
// other dangling values frozen). Bisect is its default mode; linear tries every node (the
// failing model with fewest nodes wins).
PassStatePtr start_polygraphy_bisect_outputs(const ReductionGraph& g, const Candidate& best, const Facts& facts);
PassStatePtr start_polygraphy_bisect_inputs(const ReductionGraph& g, const Candidate& best, const Facts& facts);
PassStatePtr start_polygraphy_linear_outputs(const ReductionGraph& g, const Candidate& best, const Facts& facts);
PassStatePtr start_polygraphy_linear_inputs(const ReductionGraph& g, const Candidate& best, const Facts& facts);

// Zeller's ddmin over single nodes (subsets, then complements, doubling granularity); when it
// runs to its end the result is 1-minimal.
// The precision strategy (ReduceOptions::ranking): the shortest prefix of the ranking that is still
// interesting, before node-removal and certify.
PassStatePtr start_ranked_prefix(const ReductionGraph& g, const Candidate& best, const Facts& facts);
// Without a ranking: bisection for the one node the failure needs (halving.cpp).
PassStatePtr start_halving(const ReductionGraph& g, const Candidate& best, const Facts& facts);

PassStatePtr start_ddmin(const ReductionGraph& g, const Candidate& best, const Facts& facts);

}  // namespace reduce::detail
