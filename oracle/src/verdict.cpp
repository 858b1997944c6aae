// Verdicts made from an engine's error, or from a candidate that is no answer.
#include "oracle/verdict.h"

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
    case ErrorKind::Setup:
      // The tool could not run the engine: not a verdict on the model, never a reproducer.
      return invalid_because("not the engine's failure: " + error.message());
  }
  s.normalized = normalize_message(s.message, names);
  return v;
}

}  // namespace reduce
