// Control flow before a reduction: If nodes replaced by the branch the recorded run took, so that
// the nodes of their bodies become units of reduction (issue 19). Kept only while the failure
// stays the same: an engine bug in the conditional itself keeps its If.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "core/inline_if.h"
#include "oracle/oracle.h"

namespace reduce {

struct FlattenedModel {
  std::unique_ptr<Model> model;    // the model with the taken branches inlined
  std::unique_ptr<Oracle> oracle;  // on `model`, same inputs and options; target set
  Verdict verdict;                 // the flattened model's verdict: the same failure as the original's
  InlineResult inlined;            // over every round (nested Ifs come out one level per round)
};

// Inlines the top-level If nodes of `oracle`'s model by the branch each took in the recorded run,
// round after round while inlined branches expose more If nodes (at most 64 rounds), and keeps a
// round only when the new model fails the same way as `original` (the original's verdict, a
// failure). nullopt when the model has no If to inline or the first round changes the failure.
// Errors: the stop was requested (nothing to keep), or the new model cannot be checked.
Expected<std::optional<FlattenedModel>> inline_taken_branches(Oracle& oracle, const Verdict& original,
                                                             const std::function<void(std::string)>& log,
                                                             std::stop_token stop);

}  // namespace reduce
