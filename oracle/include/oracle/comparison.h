// Comparing an engine's output with the reference's: Polygraphy-compatible tolerances and error
// statistics, with NaN/Inf treated as their own class rather than a tolerance question.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "engine/optimized.h"

namespace reduce {

// `--check-error-stat`: which statistic of the error decides pass/fail.
//   elemwise: every element must satisfy |a-b| <= atol + rtol*|b| (a: engine, b: reference);
//   max/mean/median/quantile: fails when that statistic of |a-b| exceeds atol AND the same
//   statistic of |a-b|/|b| exceeds rtol (Polygraphy's rule for these statistics).
enum class ErrorStat { Elemwise, Max, Mean, Median, Quantile };

Expected<ErrorStat> parse_error_stat(std::string_view name);
const char* to_string(ErrorStat stat);

struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-3;
  ErrorStat stat = ErrorStat::Elemwise;
  double quantile = 0.99;  // for ErrorStat::Quantile
  // The defaults (no --atol/--rtol given): an output stored in float16 or bfloat16 is compared with
  // at least its type's tolerances, whatever the engine's precision, since the reference itself
  // rounds it to that type (a model exported in FP16 is a few FP16 ulps from ONNX Runtime's).
  bool by_element_type = false;

  // The tolerance an output of element type `t` is compared with.
  Tolerance for_element_type(DType t) const;
};

// Default tolerances for an engine's precision: fp32 engines atol 1e-4 / rtol 1e-3; fp16 engines
// atol 1e-2 / rtol 1e-2 (half has 11 significant bits: ~5e-4 per rounding, accumulated over layers);
// bf16 engines atol 5e-2 / rtol 5e-2 (8 significant bits). The precision: EngineSpec::precision().
// They follow the outputs' element type (Tolerance::by_element_type).
Tolerance default_tolerance(Precision precision);

// The element types whose outputs get looser tolerances than `t` itself states, with what they
// get: {float16, {atol 1e-2, rtol 1e-2}}, ... (empty unless t.by_element_type).
std::vector<std::pair<DType, Tolerance>> element_type_tolerances(const Tolerance& t);
// "; float16 outputs atol 0.01 rtol 0.01, bfloat16 outputs atol 0.05 rtol 0.05" (empty when none).
std::string describe_element_type_tolerances(const Tolerance& t);

struct OutputComparison {
  std::string name;
  bool passed = true;
  // Shape or element type differs: nothing else is compared. Both types, engine's first:
  // "float[1,4] on the engine, float[1,3] on the reference".
  std::string structural_problem;
  bool dtype_differs = false, shape_differs = false;
  uint64_t elements = 0;
  uint64_t mismatched = 0;        // finite pairs outside the element tolerance (elemwise test)
  uint64_t nonfinite_new = 0;     // NaN/Inf in the engine's output where the reference is finite
  uint64_t nonfinite_differs = 0; // both non-finite but different (NaN vs Inf, +Inf vs -Inf), or finite where the reference is not
  uint64_t nan = 0, inf = 0;      // counts in the engine's output
  // Over finite pairs. No median or quantile: ranking every error of a large output on every
  // comparison cost more than the engine's run, and no report read them.
  double max_abs = 0, max_rel = 0, mean_abs = 0;
  // How far over the tolerance the output is: max over finite pairs of |a-b| / (atol + rtol*|b|)
  // (elemwise), or the statistic over its threshold. > 1 means failed on values.
  double ratio = 0;
  uint64_t first_bad = 0;  // flat index of the first failing element (when !passed)

  bool is_nonfinite_failure() const { return nonfinite_new > 0; }
  bool is_structural_failure() const { return !structural_problem.empty(); }
};

// Compares one output; `actual` from the engine under test, `expected` from the reference.
OutputComparison compare_tensors(std::string_view name, const Tensor& actual, const Tensor& expected,
                                 const Tolerance& tolerance);

}  // namespace reduce
