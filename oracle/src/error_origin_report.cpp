// The error-origin table and findings, for the terminal (`reduce compare`) and report.md.
#include "oracle/error_origin_report.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "oracle/verdict_report.h"

namespace reduce {

namespace {

std::string status_of(const OutputComparison& c) {
  return c.passed                    ? "ok"
         : c.is_structural_failure() ? "SHAPE"
         : c.is_nonfinite_failure()  ? "NONFINITE"
                                     : "MISMATCH";
}

std::string local_status(const ValueError& v) {
  if (!v.local_problem.empty()) return "fails to run alone";
  if (!v.local) return "not run";
  return status_of(*v.local);
}

// Whether the value's error is its node's own or comes in through its inputs.
std::string verdict_of(const ValueError& v) {
  if (adds_error(v)) return v.out_of_range ? "adds (beyond the engine's range)" : "adds";
  if (!v.unfed_input.empty() && ((v.local && !v.local->passed) || !v.accumulated.passed))
    return "inherits (input '" + v.unfed_input + "' beyond the engine's range)";
  if (!v.accumulated.passed) return v.local ? "inherits" : "?";
  return "";
}

std::string score_text(const OutputComparison& c) {
  const double s = error_score(c);
  return std::isinf(s) ? (c.structural_problem.empty() ? "non-finite" : c.structural_problem) : format_number(s) + "x tolerance";
}

void print_row(size_t k, const ValueError& v, const Graph& g, std::ostream& out) {
  const Node& n = g.nodes[v.node];
  const auto& a = v.accumulated;
  out << "| " << k << " | " << (n.name.empty() ? "(unnamed)" : n.name) << " | " << n.op_type << " | " << v.value << " | "
      << format_number(a.max_abs) << " | " << format_number(a.max_rel) << " | " << a.nan << " | " << a.inf << " | "
      << status_of(a) << " | ";
  if (v.local)
    out << format_number(v.local->max_abs) << " | " << format_number(v.local->max_rel) << " | " << v.local->nan + v.local->inf;
  else
    out << "- | - | -";
  out << " | " << local_status(v) << " | " << verdict_of(v) << " |\n";
}

void print_header(std::ostream& out) {
  out << "| # | node | op | value | max abs | max rel | NaN | Inf | status | local max abs | local max rel | local "
         "non-finite | local status | error |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
}

std::optional<size_t> first_diverging(const ErrorOrigin& origin) {
  for (size_t k = 0; k < origin.values.size(); ++k)
    if (!origin.values[k].accumulated.passed) return k;
  return std::nullopt;
}

}  // namespace

std::string describe_node(const Graph& g, const ValueError& v) {
  const Node& n = g.nodes[v.node];
  return (n.name.empty() ? "(unnamed)" : n.name) + " (" + n.op_type + "), value '" + v.value + "'";
}

void print_error_table(const ErrorOrigin& origin, const Graph& g, bool all, std::ostream& out) {
  const auto first_bad = first_diverging(origin);
  print_header(out);
  size_t printed = 0;
  for (size_t k = 0; k < origin.values.size(); ++k) {
    const ValueError& v = origin.values[k];
    const bool failing = !v.accumulated.passed || adds_error(v);
    const bool show = all || failing || k < 5 || (first_bad && k + 2 >= *first_bad && k <= *first_bad + 2);
    if (!show || (!all && printed >= 60)) continue;
    ++printed;
    print_row(k, v, g, out);
  }
  if (printed < origin.values.size() && !all)
    out << "(" << origin.values.size() - printed << " more values agree or are not shown; --all-layers)\n";
}

void print_error_findings(const ErrorOrigin& origin, const Graph& g, std::ostream& out) {
  const auto& values = origin.values;
  if (const auto first_bad = first_diverging(origin))
    out << "first diverging node: " << describe_node(g, values[*first_bad]) << "\n";
  else
    out << "no value diverges when every value is requested\n";
  if (origin.first_nonfinite)
    out << "first non-finite value: " << describe_node(g, values[*origin.first_nonfinite]) << " ("
        << values[*origin.first_nonfinite].accumulated.nonfinite_new << " non-finite where the reference is finite)\n";
  if (origin.nonfinite_born)
    out << "non-finite born at: " << describe_node(g, values[*origin.nonfinite_born])
        << ": non-finite even when the node runs alone on reference inputs\n";
  if (!origin.top_local.empty()) {
    out << "adds the most error (alone on reference inputs):";
    for (size_t k : origin.top_local)
      out << (k == origin.top_local.front() ? " " : "; ") << describe_node(g, values[k]) << " " << score_text(*values[k].local);
    out << "\n";
  } else if (origin.local_runs > 0) {
    out << "no node fails alone on reference inputs: every error is inherited or accumulates below the tolerance per node\n";
  }
  if (origin.worst_output) {
    const ValueError& w = values[*origin.worst_output];
    out << "error of output '" << w.value << "' (" << score_text(w.accumulated) << ") comes from: ";
    if (origin.sources.empty() && origin.sources_not_run > 0) {
      out << "unknown: no node run alone on its failing path fails, " << origin.sources_not_run
          << " of them not run (--local-runs bound)\n";
    } else if (origin.sources.empty()) {
      out << "no node on its failing path fails alone: the error accumulates over many nodes\n";
    } else {
      if (origin.sources_not_run > 0) out << "(" << origin.sources_not_run << " nodes on its path not run alone) ";
      for (size_t k : origin.sources)
        out << (k == origin.sources.front() ? "" : "; ") << describe_node(g, values[k]) << " " << score_text(*values[k].local);
      out << "; the other nodes on its path only inherit it\n";
    }
  }
  out << "local error: " << origin.local_runs << " nodes run alone on the engine";
  if (origin.nodes_skipped > 0) out << ", " << origin.nodes_skipped << " not run (--local-runs bound)";
  out << "\n";
}

std::string error_origin_markdown(const ErrorOrigin& origin, const Graph& g, const std::string& chart) {
  std::ostringstream md;
  md << "## Where error is born (original model)\n\n"
     << "Accumulated error: the engine on the whole model, every value requested; local error: each node alone on "
        "its recorded reference inputs, in the engine's precision. A node *adds* error when it fails alone and "
        "*inherits* it otherwise.\n\n```\n";
  print_error_findings(origin, g, md);
  md << "```\n\n";
  std::vector<size_t> rows = origin.top_local;
  for (size_t k : origin.sources) rows.push_back(k);
  if (origin.first_nonfinite) rows.push_back(*origin.first_nonfinite);
  if (origin.worst_output) rows.push_back(*origin.worst_output);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  if (!rows.empty()) {
    print_header(md);
    for (size_t k : rows) print_row(k, origin.values[k], g, md);
    md << "\n";
  }
  if (!chart.empty()) {
    md << "![error per node and output values](" << chart << ")";
    // A PNG drawn beside its SVG (a bundle's error.png): the SVG scales without blur.
    if (chart.size() > 4 && chart.compare(chart.size() - 4, 4, ".png") == 0)
      md << " ([SVG](" << chart.substr(0, chart.size() - 4) << ".svg))";
    md << "\n\n";
  }
  return md.str();
}

}  // namespace reduce
