// Printing verdicts: the failure signature and the per-output error table, as `check`, `compare`
// and `reduce` show them.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "oracle/oracle.h"

namespace reduce {

// "| output | elements | max abs | max rel | mismatched | NaN | Inf | status |" rows (Markdown).
void print_output_table(const std::vector<OutputComparison>& outputs, std::ostream& out);

// "verdict: FAIL (nonfinite)\nsignature: ...\n" then the table when the engine ran.
void print_verdict(const Verdict& verdict, std::ostream& out);

// "model: PATH (N nodes)", "engine: ...  reference: ...", "tolerance: ..." lines.
void print_oracle_header(const std::string& model_path, const Model& model, const Oracle& oracle, std::ostream& out);

// Formats a double compactly ("1.2e-05", "0.5", "inf").
std::string format_number(double v);

}  // namespace reduce
