// Verdict: what one evaluation of a candidate on the engine under test says, and how an engine's
// error becomes one.
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/status.h"
#include "oracle/comparison.h"
#include "oracle/signature.h"

namespace reduce {

struct Verdict {
  FailureSignature signature;
  std::vector<OutputComparison> outputs;  // per candidate output, when the engine ran
  double seconds = 0;                     // engine time, comparisons excluded (0 for cache hits)
  bool cache_hit = false;
  bool invalid = false;                   // not a runnable candidate (checker, or the reference failed)
  bool cancelled = false;                 // the caller cancelled the run: not an answer
  std::string invalid_reason;
  // The engine's release cannot take the model (Error::limit: a format, opset or type it does not
  // know, no kernel): the limit in a few words. The verdict is still the error (or, for a limit of
  // the tool's binding, invalid), so a reduction can find the node; a release scan calls it
  // "cannot take", never a failure or a fix.
  std::string cannot_take;
  int runs = 1;           // engine runs behind this verdict (OracleOptions::repeat)
  // What the engine was given in each of those runs: the model's nodes and its weights' bytes
  // (0 when the engine never saw it: refused, cancelled while waiting, a cache hit).
  uint64_t work_nodes = 0;
  uint64_t work_weight_bytes = 0;
  int failing_runs = 0;   // of those, the ones that showed the failure (with repeat > 1)
  bool flaky() const { return failing_runs > 0 && failing_runs < runs; }
  // The engine ran the candidate and it failed (an invalid or cancelled verdict is no answer).
  bool fails() const { return !invalid && !cancelled && signature.fails(); }

  // Not an answer on the model: the candidate could not be made or run, for `reason`.
  static Verdict invalid_because(std::string reason);
  // The verdict an engine's error gives: a crash, a timeout or an error, its message normalized
  // with the model's `names` masked; a setup error (the tool could not run the engine) is invalid.
  static Verdict from_error(const Error& error, const std::unordered_set<std::string>& names);
};

// The signature of a run whose outputs were all compared (in output order). An output of another
// shape or element type makes it `shape` (its values could not be compared, and it is the more
// definite bug), then any new NaN/Inf `nonfinite`, then any other failing output `mismatch`.
FailureSignature signature_of_outputs(const std::vector<OutputComparison>& outputs);

}  // namespace reduce
