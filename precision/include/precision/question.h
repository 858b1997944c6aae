// Which of `reduce precision`'s two questions a model asks, and what answering it takes: the FP32
// keep set on a reduced-precision engine, or, with a Q/DQ model's plan, the quantized nodes to
// leave in float. The command asks the question; the question picks the search, the bundle and the
// words of the answer.
#pragma once

#include <filesystem>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "precision/precision.h"
#include "precision/quantization.h"

namespace reduce {

class PrecisionQuestion {
 public:
  // No plan: the FP32 keep set; a plan (precision/float_model.h): the quantized nodes.
  explicit PrecisionQuestion(std::optional<QuantizedSearchPlan> plan = std::nullopt) : plan_(std::move(plan)) {}
  const QuantizedSearchPlan* plan() const { return plan_ ? &*plan_ : nullptr; }

  // find_fp32_nodes, or find_float_nodes with the plan.
  Expected<PrecisionOutcome> search(std::vector<Oracle*> samples, const PrecisionOptions& options, std::stop_token stop) const;
  // sweep_tolerances with this question's search.
  Expected<ToleranceSweep> sweep(const std::vector<Oracle*>& samples, const PrecisionOptions& options,
                                 const std::vector<double>& tolerances, std::stop_token stop,
                                 const std::function<void(const SweepRow&)>& on_row) const;
  // write_precision_bundle, or write_quantization_bundle with the plan.
  Status write_bundle(const std::filesystem::path& dir, const Oracle& oracle, const PrecisionOutcome& outcome,
                      const std::string& command) const;
  // A sweep's folder: sweep.json and, when some tolerance found a set, the bundle of the tightest
  // (its outcome with `renamed`). `dir` is created.
  Status write_sweep(const std::filesystem::path& dir, const Oracle& oracle, const ToleranceSweep& sweep,
                     const NodeRenaming& renamed, const std::string& command) const;

  // The words the command prints, each ending in a newline ("" when there is nothing to say).
  // Before the search: what a Q/DQ model is compared with.
  std::string intro() const;
  // The answer when the search did not find a set: it does not fail, or fails even with every node kept.
  std::string no_set(const PrecisionOutcome& outcome) const;
  // The set, its confirmation, and how to deploy it (the flags that keep it in FP32 on TensorRT 10
  // and Polygraphy, the converted model on a strongly typed engine, the quantizers' nodes_to_exclude).
  std::string answer(const PrecisionOutcome& outcome, const Oracle& oracle) const;
  // "precision.txt, model.onnx, ..., report.json": what write_bundle writes.
  std::string bundle_files(const Oracle& oracle) const;

 private:
  std::optional<QuantizedSearchPlan> plan_;
};

// One line per tolerance of a sweep: the set found, or why none.
std::string outcome_line(const PrecisionOutcome& outcome);

}  // namespace reduce
