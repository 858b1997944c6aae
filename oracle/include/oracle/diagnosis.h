// `reduce check --diagnose`: what a failure depends on. Each variant of the model (every float node
// in FP32, intermediates marked as outputs, inputs bound in another order, a dynamic batch, batch 2,
// smaller inputs) is checked on the engine under test; one that passes names a dependency, one that
// fails another way is inconclusive.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "oracle/oracle.h"

namespace reduce {

// Fails: the variant shows the original's failure (the same one, as the oracle's target judges it,
// --fail-regex included). FailsOtherwise: it fails in another way, so it neither shows nor rules out
// the dependency: the original's failure went away, but something else is wrong.
enum class VariantOutcome { Passes, Fails, FailsOtherwise, NotApplicable };

struct DiagnosisLine {
  std::string dependency;  // what a pass would mean the failure depends on: "precision", "fusion", ...
  std::string variant;     // what the variant changes
  VariantOutcome outcome = VariantOutcome::NotApplicable;
  std::string verdict;     // "passes", "fails (same failure)", "fails otherwise (nonfinite: ...)", "n/a: why"
  std::string meaning;     // one sentence: what this outcome says about the failure
};

struct Diagnosis {
  std::vector<DiagnosisLine> lines;  // precision, fusion, input binding, static batch, batch 1, input range

  // The dependencies whose variant has `outcome`, in line order.
  std::vector<std::string> dependencies_with(VariantOutcome outcome) const;
  // Those whose variant passes.
  std::vector<std::string> depends_on() const { return dependencies_with(VariantOutcome::Passes); }
  // Those whose variant fails another way.
  std::vector<std::string> inconclusive() const { return dependencies_with(VariantOutcome::FailsOtherwise); }
};

// Checks every variant of the oracle's model on its engine under test. The oracle's target must be
// the original's failure (target().set). For `cmd:` engines every variant is one model file the
// command runs (the binding variant runs the model's file with the inputs permuted). Variants that
// change the model, its inputs or the engine record the reference again on that variant. Returns
// an error only when cancelled.
Expected<Diagnosis> diagnose(Oracle& oracle, const std::atomic<bool>* cancel = nullptr);

}  // namespace reduce
