// Tracing where error is born in the original model, for the bundle.
#include "error_origin_section.h"

#include "oracle/error_origin.h"
#include "oracle/error_chart.h"
#include "oracle/error_origin_report.h"

namespace reduce {

namespace {

ErrorSource source(const Graph& graph, const ValueError& v) {
  const Node& n = graph.nodes[v.node];
  return {n.name, n.op_type, v.value, v.local ? error_score(*v.local) : 0};
}

}  // namespace

Status trace_bundle_error_origin(const std::filesystem::path& dir, Oracle& oracle, ReductionReport& report,
                                 const std::atomic<bool>* cancel) {
  std::error_code ec;
  for (const char* name : {"error.svg", "error.png"}) std::filesystem::remove(dir / name, ec);  // never an earlier reproducer's
  const FailureKind kind = oracle.target().signature().kind;
  if ((kind != FailureKind::Mismatch && kind != FailureKind::NonFinite) || (cancel && cancel->load())) return {};
  auto layers = compare_layers(oracle, cancel);
  if (!layers || (cancel && cancel->load())) return {};
  ErrorOriginOptions options;
  options.max_local_runs = kBundleLocalRuns;
  options.jobs = oracle.options().slots;
  const ErrorOrigin origin = trace_error_origin(oracle, *layers, options, cancel);
  if (cancel && cancel->load()) return {};
  const Graph& graph = oracle.model().graph;
  for (size_t k : origin.sources) report.error_sources.push_back(source(graph, origin.values[k]));
  if (origin.nonfinite_born) report.nonfinite_born = source(graph, origin.values[*origin.nonfinite_born]);
  TensorMap actual;  // the original's outputs: kept from its failing check, or one more run
  oracle.evaluate(Candidate::whole(graph), cancel, &actual);
  REDUCE_ASSIGN(ChartResult chart, write_error_chart({dir / "error.svg", dir / "error.png"}, origin, graph,
                                                     histogram_output(oracle, origin, actual), cancel));
  report.error_svg = report.error_png = chart.outcome == ChartOutcome::Drawn;
  // The PNG in report.md: GitHub issues and most trackers take PNG, not SVG.
  report.error_origin = error_origin_markdown(origin, graph, report.error_png ? "error.png" : "");
  if (!report.error_svg) report.error_origin += "(" + chart.note + ")\n\n";
  return {};
}

}  // namespace reduce
