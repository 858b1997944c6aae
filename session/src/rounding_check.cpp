// The reproducer on the exact reduced-precision reference, beside the engine's failure.
#include "rounding_check.h"

#include <memory>

#include "adapters/engine_spec.h"

namespace reduce {

void check_rounding(Oracle& oracle, const CandidateRun& run, const std::atomic<bool>* cancel, ReductionReport& report) {
  const FailureKind kind = oracle.target().signature().kind;
  if (kind != FailureKind::Mismatch && kind != FailureKind::NonFinite) return;
  if (!oracle.spec() || oracle.spec()->precision() == Precision::FP32) return;
  const EngineSpec& spec = *oracle.spec();
  const bool bf16 = spec.precision() == Precision::BF16;
  // `fp16:ref` or `bf16:ref`, the engine's FP32 nodes kept: built, not parsed.
  EngineSpec exact;
  exact.kind = bf16 ? EngineKind::Bf16 : EngineKind::Fp16;
  exact.inner = std::make_shared<const EngineSpec>();  // ref
  exact.fp32_nodes = spec.fp32();
  RoundingCheck& r = report.rounding;
  r.precision = bf16 ? "BF16" : "FP16";
  r.engine = to_string(exact);
  if (exact == spec) {  // the engine is that reference: its error is rounding by definition
    r.checked = r.explained = true;
    r.verdict = oracle.target().signature().to_string();
    return;
  }
  const Verdict v = oracle.evaluate_probe(run, cancel, exact);
  if (v.cancelled || v.invalid) return;
  report.count_runs_after_search(1);
  r.checked = true;
  r.explained = oracle.target().match(v) == SignatureMatch::Same;
  r.verdict = v.signature.fails() ? v.signature.to_string() : "pass";
}

}  // namespace reduce
