// Control flow before a reduction: If nodes replaced by the branch the recorded run took and Loop
// nodes by as many copies of their body as the recorded run made iterations, so that the nodes of
// their bodies become units of reduction (issue 19). Kept only while the failure stays the same:
// an engine bug in the control-flow node itself keeps it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "core/inline_if.h"
#include "core/unroll_loop.h"
#include "oracle/oracle.h"

namespace reduce {

struct FlattenedModel {
  std::unique_ptr<Model> model;    // the model with the taken branches inlined
  std::unique_ptr<Oracle> oracle;  // on `model`, same inputs and options; target set
  Verdict verdict;                 // the flattened model's verdict: the same failure as the original's
  InlineResult inlined;            // over every round (nested Ifs come out one level per round)
  UnrollResult unrolled;           // likewise for Loops
};

struct FlattenOptions {
  bool inline_if = true;
  bool unroll_loops = true;
  size_t max_unrolled_nodes = 100000;  // nodes that unrolling may add, over every Loop, Scan and round
};

// Inlines the top-level If nodes of `oracle`'s model by the branch each took in the recorded run,
// then unrolls its top-level Loop nodes by the iterations each made (counted by a reference run of
// the model with trip counters, core/unroll_loop.h), round after round while the bodies expose
// more of them (at most 64 rounds). Each step is kept only when the new model fails the same way
// as `original` (the original's verdict, a failure). nullopt when nothing was kept.
// Errors: the stop was requested (nothing to keep), or a new model cannot be checked.
Expected<std::optional<FlattenedModel>> flatten_control_flow(Oracle& oracle, const Verdict& original,
                                                            const FlattenOptions& options,
                                                            const std::function<void(std::string)>& log,
                                                            std::stop_token stop);

// What a reduction runs first: when the model has If, Loop or Scan nodes the options flatten and
// it fails (its verdict, cached, so the session does not run it again), flatten_control_flow;
// nullopt (without running anything) when there is nothing to flatten, or when it does not fail.
Expected<std::optional<FlattenedModel>> flatten_when_failing(Oracle& oracle, const FlattenOptions& options,
                                                            const std::function<void(std::string)>& log,
                                                            std::stop_token stop);

}  // namespace reduce
