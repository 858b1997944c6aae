// Verdicts made from an engine's error, or from a candidate that is no answer.
#include "oracle/verdict.h"

#include <algorithm>

namespace reduce {

Verdict Verdict::invalid_because(std::string reason) {
  Verdict v;
  v.invalid = true;
  v.invalid_reason = std::move(reason);
  return v;
}

Verdict Verdict::from_error(const Error& error, const std::unordered_set<std::string>& names) {
  Verdict v;
  FailureSignature& s = v.signature;
  s.message = error.message();
  switch (error.kind) {
    case ErrorKind::Crash: s.kind = FailureKind::Crash; s.signal = error.signal; break;
    case ErrorKind::Timeout: s.kind = FailureKind::Timeout; break;
    case ErrorKind::Error: s.kind = FailureKind::Error; break;
    case ErrorKind::Setup: {
      // The tool could not run the engine: not a verdict on the model, never a reproducer.
      Verdict invalid = invalid_because("not the engine's failure: " + error.message());
      invalid.cannot_take = error.limit;
      return invalid;
    }
  }
  v.cannot_take = error.limit;
  s.normalized = normalize_message(s.message, names);
  return v;
}

namespace {

// "shape differs", "element type differs", "element type and shape differ": the same-failure rule
// of a shape failure compares this, not the outputs' names (docs/oracle.md).
std::string what_differs(bool dtype, bool shape) {
  if (dtype && shape) return "element type and shape differ";
  return dtype ? "element type differs" : "shape differs";
}

std::string problem_of(const OutputComparison& c) {
  if (c.nonfinite_new > 0) return std::to_string(c.nonfinite_new) + " non-finite values where the reference is finite";
  // A finite value (or NaN) where the reference has an infinity: no error is finite, so say what it is.
  if (c.nonfinite_differs > 0)
    return std::to_string(c.nonfinite_differs) + " of " + std::to_string(c.elements) +
           " elements differ where the reference is NaN or infinite (e.g. finite where it is -inf)" +
           (c.mismatched > 0 ? "; " + std::to_string(c.mismatched) + " more differ, max abs error " + std::to_string(c.max_abs)
                             : std::string());
  return std::to_string(c.mismatched) + " of " + std::to_string(c.elements) + " elements differ, max abs error " +
         std::to_string(c.max_abs);
}

}  // namespace

FailureSignature signature_of_outputs(const std::vector<OutputComparison>& outputs) {
  FailureSignature s;
  bool dtype = false, shape = false, nonfinite = false;
  size_t structural = 0;
  double worst = 0;
  std::string first_shape, first_values;  // the first output of each sort
  for (const OutputComparison& c : outputs) {
    if (c.passed) continue;
    if (c.is_structural_failure()) {
      if (structural++ == 0) first_shape = "output `" + c.name + "` is " + c.structural_problem;
      dtype |= c.dtype_differs;
      shape |= c.shape_differs;
      continue;
    }
    nonfinite |= c.is_nonfinite_failure();
    worst = std::max(worst, c.ratio);
    if (first_values.empty()) first_values = "output '" + c.name + "': " + problem_of(c);
  }
  s.magnitude = magnitude_class(worst);
  if (structural > 0) {
    s.kind = FailureKind::Shape;
    s.message = first_shape;
    if (structural > 1) s.message += " (and " + std::to_string(structural - 1) + " more outputs of another shape or type)";
    s.normalized = what_differs(dtype, shape);
  } else if (!first_values.empty()) {
    s.kind = nonfinite ? FailureKind::NonFinite : FailureKind::Mismatch;
    s.message = first_values;
  }
  return s;
}

}  // namespace reduce
