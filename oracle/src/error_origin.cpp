// Local error per node (one-node models on the recorded reference inputs) against the accumulated
// layerwise error, and the walk back from the worst output to the nodes where its error is born.
#include "oracle/error_origin.h"

#include "core/graph_algorithms.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace reduce {

bool adds_error(const ValueError& v) { return v.local && !v.local->passed && v.unfed_input.empty(); }

double error_score(const OutputComparison& c) {
  if (!c.structural_problem.empty() || c.nonfinite_new > 0 || c.nonfinite_differs > 0)
    return std::numeric_limits<double>::infinity();
  return c.ratio;
}

namespace {

constexpr double kNoScore = -1;  // a value not run alone ranks below every real score

double local_score(const ValueError& v) { return v.local ? error_score(*v.local) : kNoScore; }

// The largest finite magnitude the engine stores; beyond it a value becomes Inf at its boundary.
double largest_finite(Precision p) {
  switch (p) {
    case Precision::FP16: return 65504.0;
    case Precision::BF16: return 3.3895313892515355e38;
    case Precision::FP32: break;
  }
  return std::numeric_limits<double>::infinity();
}

// Elements of a float tensor that are finite but beyond `limit`.
uint64_t beyond(const Tensor* t, double limit) {
  if (!t || std::isinf(limit) || !dtype_is_float(t->dtype())) return 0;
  uint64_t n = 0;
  for (uint64_t i = 0; i < t->elements(); ++i) {
    const double x = std::fabs(t->element_as_double(i));
    n += std::isfinite(x) && x > limit;
  }
  return n;
}

Precision engine_precision(const Oracle& oracle) {
  return oracle.spec() ? oracle.spec()->precision() : Precision::FP32;
}

// The values of each node (indices into `values`), nodes in topological order of first appearance.
std::vector<std::pair<size_t, std::vector<size_t>>> values_by_node(const std::vector<ValueError>& values) {
  std::vector<std::pair<size_t, std::vector<size_t>>> nodes;
  std::unordered_map<size_t, size_t> where;
  for (size_t k = 0; k < values.size(); ++k) {
    auto [it, added] = where.emplace(values[k].node, nodes.size());
    if (added) nodes.push_back({values[k].node, {}});
    nodes[it->second].second.push_back(k);
  }
  return nodes;
}

// Which nodes run alone when there are more than the bound: those whose accumulated error grows
// the most over their inputs' (where error can be born), then the largest accumulated errors; ties
// in topological order. Returns positions into `nodes`, in topological order.
std::vector<size_t> nodes_to_run(const Graph& graph, const std::vector<ValueError>& values,
                                 const std::vector<std::pair<size_t, std::vector<size_t>>>& nodes,
                                 const std::unordered_map<std::string_view, size_t>& by_name, size_t bound) {
  std::vector<size_t> order(nodes.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  if (nodes.size() <= bound) return order;
  std::vector<std::pair<double, double>> key(nodes.size());  // (growth, accumulated)
  for (size_t k = 0; k < nodes.size(); ++k) {
    double out = 0, in = 0;
    for (size_t v : nodes[k].second) out = std::max(out, error_score(values[v].accumulated));
    for (const auto& name : graph.nodes[nodes[k].first].inputs)
      if (auto it = by_name.find(name); it != by_name.end()) in = std::max(in, error_score(values[it->second].accumulated));
    const double growth = std::isinf(out) ? (std::isinf(in) ? 0 : out) : out - std::min(in, out);
    key[k] = {growth, out};
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key[a] > key[b]; });
  order.resize(bound);
  std::sort(order.begin(), order.end());
  return order;
}

// Runs one node alone and fills the local comparisons of its values.
void run_alone(Oracle& oracle, size_t node, const std::vector<size_t>& value_ids, std::vector<ValueError>& values,
               const std::atomic<bool>* cancel) {
  Candidate c;
  c.nodes = {node};
  for (size_t v : value_ids) c.outputs.push_back(values[v].value);
  const Verdict verdict = oracle.evaluate(c, cancel);
  if (verdict.cancelled) return;
  std::string problem = verdict.invalid ? verdict.invalid_reason : "";
  const FailureKind kind = verdict.signature.kind;
  if (kind == FailureKind::Error || kind == FailureKind::Crash || kind == FailureKind::Timeout)
    problem = verdict.signature.to_string();
  for (size_t v : value_ids) {
    values[v].local_problem = problem;
    for (const auto& out : verdict.outputs)
      if (problem.empty() && out.name == values[v].value) values[v].local = out;
  }
}

// Positions of the values of `values` sorted by local score, largest first (ties: topological).
std::vector<size_t> by_local_score(const std::vector<ValueError>& values, std::vector<size_t> ids, size_t top) {
  std::stable_sort(ids.begin(), ids.end(),
                   [&](size_t a, size_t b) { return local_score(values[a]) > local_score(values[b]); });
  if (ids.size() > top) ids.resize(top);
  return ids;
}

// The nodes that feed `output` through values whose accumulated error fails (the output's own node
// included): the only places the output's error can come from.
NodeMask failing_cone(const GraphIndex& index, const std::vector<ValueError>& values, size_t output,
                      const std::unordered_map<std::string_view, size_t>& by_name) {
  const size_t start = values[output].node;
  return ancestors_through(index, std::span(&start, 1), [&](std::string_view name) {
    auto it = by_name.find(name);
    return it != by_name.end() && !values[it->second].accumulated.passed;
  });
}

}  // namespace

ErrorOrigin trace_error_origin(Oracle& oracle, const std::vector<LayerError>& layers,
                               const ErrorOriginOptions& options, const std::atomic<bool>* cancel) {
  const Graph& graph = oracle.model().graph;
  ErrorOrigin origin;
  for (const auto& l : layers) {
    ValueError v;
    v.node = l.node;
    v.value = l.value;
    v.accumulated = l.comparison;
    origin.values.push_back(std::move(v));
  }
  auto& values = origin.values;
  std::unordered_map<std::string_view, size_t> by_name;
  for (size_t k = 0; k < values.size(); ++k) by_name.emplace(values[k].value, k);
  origin.precision = engine_precision(oracle);
  const double limit = largest_finite(origin.precision);
  for (auto& v : values) {
    const Tensor* recorded = oracle.recorded().find(v.value);
    v.out_of_range = beyond(recorded, limit);
    if (recorded) oracle.recorded().release_pages(*recorded);  // read once: its pages can go
  }
  // Weights and graph inputs beyond the range are the consuming node's own problem: only values
  // that nodes produce are inherited.
  for (auto& v : values)
    for (const auto& name : graph.nodes[v.node].inputs)
      if (auto it = by_name.find(name); v.unfed_input.empty() && it != by_name.end() && values[it->second].out_of_range > 0)
        v.unfed_input = name;

  const auto nodes = values_by_node(values);
  const std::vector<size_t> run = nodes_to_run(graph, values, nodes, by_name, options.max_local_runs);
  origin.local_runs = run.size();
  origin.nodes_skipped = nodes.size() - run.size();
  // Each worker takes the next node; every node writes only its own values: the same result for
  // every number of workers.
  std::atomic<size_t> next{0};
  size_t done = 0;
  std::mutex progress;
  auto work = [&] {
    for (size_t k; (k = next.fetch_add(1)) < run.size() && !(cancel && cancel->load());) {
      run_alone(oracle, nodes[run[k]].first, nodes[run[k]].second, values, cancel);
      if (options.on_progress) {
        std::lock_guard<std::mutex> lock(progress);
        options.on_progress(++done, run.size());
      }
    }
  };
  {
    std::vector<std::jthread> workers;
    const size_t n = std::clamp<size_t>(static_cast<size_t>(std::max(1, options.jobs)), 1, std::max<size_t>(1, run.size()));
    for (size_t w = 1; w < n; ++w) workers.emplace_back(work);
    work();
  }

  std::vector<size_t> failing_alone, outputs;
  std::unordered_set<std::string_view> graph_outputs;
  for (const auto& vi : graph.outputs) graph_outputs.insert(vi.name);
  for (size_t k = 0; k < values.size(); ++k) {
    const ValueError& v = values[k];
    if (!origin.first_nonfinite && v.accumulated.nonfinite_new > 0) origin.first_nonfinite = k;
    if (!origin.nonfinite_born && adds_error(v) && v.local->nonfinite_new > 0) origin.nonfinite_born = k;
    if (adds_error(v)) failing_alone.push_back(k);
    if (graph_outputs.count(v.value) && !v.accumulated.passed) outputs.push_back(k);
  }
  origin.top_local = by_local_score(values, failing_alone, options.top);
  if (outputs.empty()) return origin;
  origin.worst_output = *std::max_element(outputs.begin(), outputs.end(), [&](size_t a, size_t b) {
    return error_score(values[a].accumulated) < error_score(values[b].accumulated);
  });
  const NodeMask cone = failing_cone(oracle.extractor().index(), values, *origin.worst_output, by_name);
  std::vector<size_t> in_cone;
  std::unordered_set<size_t> not_run;
  for (size_t k = 0; k < values.size(); ++k) {
    if (!cone[values[k].node]) continue;
    if (adds_error(values[k])) in_cone.push_back(k);
    if (!values[k].local && values[k].local_problem.empty()) not_run.insert(values[k].node);
  }
  origin.sources_not_run = not_run.size();
  origin.sources = by_local_score(values, in_cone, options.top);
  return origin;
}

}  // namespace reduce
