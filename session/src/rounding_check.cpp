// The reproducer on the exact reduced-precision reference, beside the engine's failure.
#include "rounding_check.h"

#include "adapters/engine_spec.h"

namespace reduce {

void check_rounding(Oracle& oracle, const CandidateRun& run, const std::atomic<bool>* cancel, ReductionReport& report) {
  const FailureKind kind = oracle.target().signature().kind;
  if (kind != FailureKind::Mismatch && kind != FailureKind::NonFinite) return;
  const auto spec = parse_engine_spec(oracle.options().engine);
  if (!spec || spec->precision() == Precision::FP32) return;
  const bool bf16 = spec->precision() == Precision::BF16;
  auto exact = parse_engine_spec(bf16 ? "bf16:ref" : "fp16:ref");
  if (!exact) return;
  exact->fp32_nodes = spec->fp32();
  RoundingCheck& r = report.rounding;
  r.precision = bf16 ? "BF16" : "FP16";
  r.engine = to_string(*exact);
  if (*exact == *spec) {  // the engine is that reference: its error is rounding by definition
    r.checked = r.explained = true;
    r.verdict = oracle.target().signature().to_string();
    return;
  }
  const Verdict v = oracle.evaluate_probe(run, cancel, [&](const EngineSpec&) -> Expected<EngineSpec> { return *exact; });
  if (v.cancelled || v.invalid) return;
  report.count_runs_after_search(1);
  r.checked = true;
  r.explained = oracle.target().match(v) == SignatureMatch::Same;
  r.verdict = v.signature.fails() ? v.signature.to_string() : "pass";
}

}  // namespace reduce
