// The default strategy: the passes of passes.def that ReduceOptions::passes selects, in rounds.
#include "../passes/passes.h"
#include "reducer/reducer.h"
#include "strategies.h"

namespace reduce::detail {

// Certified 1-minimal when certify is one of the passes.
Strategy build_default_strategy(const ReduceOptions& options) {
  Strategy strategy;
  for (size_t i = 0; i < pass_table().size(); ++i)
    if (options.passes.runs(i))
      strategy.passes.push_back({pass_table()[i].name, pass_table()[i].start, pass_table()[i].simplifies});
  strategy.rounds = true;
  strategy.certifies = options.passes.runs(static_cast<size_t>(PassId::start_certify));
  return strategy;
}

}  // namespace reduce::detail
