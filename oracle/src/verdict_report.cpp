// Verdict and error-table printing.
#include "oracle/verdict_report.h"

#include <cmath>
#include <cstdio>

#include "adapters/engine_spec.h"

namespace reduce {

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

void print_output_table(const std::vector<OutputComparison>& outputs, std::ostream& out) {
  out << "| output | elements | max abs | max rel | mismatched | NaN | Inf | status |\n"
         "|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : outputs) {
    std::string status = c.passed                   ? "ok"
                         : c.is_structural_failure() ? "SHAPE (" + c.structural_problem + ")"
                         : c.is_nonfinite_failure()  ? "NONFINITE"
                                                     : "MISMATCH";
    out << "| " << c.name << " | " << c.elements << " | " << format_number(c.max_abs) << " | "
        << format_number(c.max_rel) << " | " << c.mismatched << " | " << c.nan << " | " << c.inf << " | " << status
        << " |\n";
  }
}

void print_oracle_header(const std::string& model_path, const Model& model, const Oracle& o, std::ostream& out) {
  const Tolerance& t = o.options().tolerance;
  out << "model: " << model_path << " (" << count_nodes(model.graph) << " nodes)\n"
      << "engine: " << o.options().engine << "  reference: " << o.options().reference << "\n";
  const ReferenceRecording& recording = o.recording();
  if (recording.given_values > 0)
    out << "expected: " << recording.given_source << " ("
        << (!recording.reference_ran ? "every value given; the reference did not run"
                                     : std::to_string(recording.given_values) + " value(s) given; the reference computes the others")
        << ")\n";
  if (const std::string& note = recording.refusal_note; !note.empty()) out << "note: " << note << "\n";
  // A preset (`trt`) names the command it runs, placeholders and all, so that it can be rerun by hand.
  if (o.spec())
    if (const std::string line = preset_command_line(*o.spec(), o.options().environment); !line.empty())
      out << "engine command: " << line << "\n";
  out << "tolerance: atol " << format_number(t.atol) << ", rtol " << format_number(t.rtol) << ", " << to_string(t.stat)
      << describe_element_type_tolerances(t) << "\n";
}

void print_verdict(const Verdict& v, std::ostream& out) {
  if (v.invalid) {
    out << "verdict: INVALID (" << v.invalid_reason << ")\n";
    return;
  }
  out << "verdict: " << (v.signature.fails() ? "FAIL (" + std::string(to_string(v.signature.kind)) + ")" : "PASS") << "\n";
  if (v.signature.fails()) {
    out << "signature: " << v.signature.to_string() << "\n";
    if (!v.signature.message.empty() || v.signature.kind == FailureKind::Error)
      out << "message: " << shown_message(v.signature.message) << "\n";
  }
  if (!v.outputs.empty()) print_output_table(v.outputs, out);
}

}  // namespace reduce
