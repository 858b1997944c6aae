// certify: sweeps removing each remaining node alone, top-level nodes and nodes inside kept
// bodies, until a sweep removes nothing: the result is then 1-minimal over every unit.
#include "passes.h"

namespace reduce::detail {

PassStatePtr start_certify(const ReductionGraph& g, const Candidate& best, const Facts&) {
  return start_removal_sweeps(g, best);
}

}  // namespace reduce::detail
