// Polygraphy's `debug precision` as baselines: keeps the first K candidates of the topological
// order (or the last K, `--direction reverse`) and searches K, by bisection (assumes more nodes kept
// never fails again) or one node more per check. The model fails at K = 0 and passes at K = all
// (checked before).
#include <algorithm>
#include <chrono>
#include <optional>

#include "strategies.h"

namespace reduce::detail {

namespace {

// The candidates in the order K counts them.
std::vector<size_t> prefix_order(const Oracle& oracle, const KeepSetProblem& problem, bool from_outputs) {
  std::vector<size_t> order;
  for (size_t n : oracle.extractor().index().topological_order())
    if (std::binary_search(problem.candidates.begin(), problem.candidates.end(), n)) order.push_back(n);
  if (from_outputs) std::reverse(order.begin(), order.end());
  return order;
}

Status search_prefix(const std::vector<Oracle*>& samples, const KeepSetProblem& problem, const PrecisionOptions& options,
                     bool linear, std::atomic<bool>& cancelled, PrecisionOutcome& out) {
  const Graph& g = samples[0]->model().graph;
  const std::vector<size_t> order = prefix_order(*samples[0], problem, options.from_outputs);
  auto first = [&](size_t k) { return std::vector<size_t>(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k)); };
  size_t passes_at = order.size(), fails_at = 0;  // known: K = all passes, K = 0 fails
  Verdict best = out.after;
  const auto start = std::chrono::steady_clock::now();
  // One set: true when the model passes with it; nullopt when stopped.
  auto passes = [&](size_t k) -> Expected<std::optional<bool>> {
    std::vector<size_t> set = first(k);
    std::sort(set.begin(), set.end());
    const Verdict v = check_set(samples, problem.check, set, &cancelled);
    if (v.cancelled || cancelled) return std::optional<bool>{};
    if (v.invalid) return make_error("the model with " + std::to_string(k) + " nodes " + problem.kept + " cannot be checked: " + v.invalid_reason);
    ++out.checks;
    if (!v.signature.fails()) best = v;
    if (options.log)
      options.log(options.strategy + ": " + std::to_string(k) + " of " + std::to_string(order.size()) + " nodes " + problem.kept + ": " +
                  (v.signature.fails() ? "fails" : "passes"));
    return std::optional<bool>{!v.signature.fails()};
  };
  while (passes_at - fails_at > 1) {
    const size_t k = linear ? fails_at + 1 : fails_at + (passes_at - fails_at) / 2;
    REDUCE_ASSIGN(const std::optional<bool> answer, passes(k));
    if (!answer) {
      out.stopped = true;
      break;
    }
    (*answer ? passes_at : fails_at) = k;
    // Linear search stops at the first K that passes.
    if (*answer && linear) break;
  }
  std::vector<size_t> set = first(passes_at);
  if (options.from_outputs) std::reverse(set.begin(), set.end());  // reported in topological order
  for (size_t n : set) out.pinned.push_back({n, g.nodes[n].name, g.nodes[n].op_type, 0.0});
  out.after = best;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {};
}

}  // namespace

Status search_polygraphy_bisect(const std::vector<Oracle*>& samples, const KeepSetProblem& problem,
                                const PrecisionOptions& options, std::atomic<bool>& cancelled, PrecisionOutcome& out) {
  return search_prefix(samples, problem, options, false, cancelled, out);
}

Status search_polygraphy_linear(const std::vector<Oracle*>& samples, const KeepSetProblem& problem,
                                const PrecisionOptions& options, std::atomic<bool>& cancelled, PrecisionOutcome& out) {
  return search_prefix(samples, problem, options, true, cancelled, out);
}

}  // namespace reduce::detail
