// Inlining the branches and unrolling the loops of the recorded run, round by round, while the
// failure stays the same.
#include "session/control_flow.h"

#include <algorithm>
#include <atomic>

#include "core/candidate.h"

namespace reduce {

namespace {

constexpr int kMaxRounds = 64;  // subgraphs nest at most 64 deep (core validation)

// The branch an If took: its recorded condition, when the reference recorded it.
std::optional<bool> recorded_condition(const Oracle& oracle, const std::string& name) {
  const Tensor* t = oracle.recorded().find(name);
  if (!t || t->elements() != 1) return std::nullopt;
  return t->element_as_double(0) != 0;
}

// An oracle on `model` with `oracle`'s inputs and options, abandoned on a stop.
Expected<std::unique_ptr<Oracle>> oracle_on(const Oracle& oracle, const Model& model, std::atomic<bool>& cancel) {
  OracleOptions options = oracle.options();
  options.record.cancel = &cancel;  // a stop abandons the reference run
  return Oracle::create(model, oracle.inputs(), std::move(options));
}

// Position in graph.nodes -> the iterations each top-level Loop and Scan made in the reference run
// of `oracle`'s model: a Scan's is the length of its first scan input (recorded); a Loop's takes
// one more reference run, of the model with trip counters.
Expected<std::unordered_map<size_t, int64_t>> trip_counts(const Oracle& oracle, std::atomic<bool>& cancel) {
  const Graph& g = oracle.model().graph;
  std::unordered_map<size_t, int64_t> trips;
  auto recorded_shape = [&](const std::string& name) -> std::optional<Shape> {
    const Tensor* t = oracle.recorded().find(name);
    return t ? std::optional<Shape>(t->shape()) : std::nullopt;
  };
  for (size_t p = 0; p < g.nodes.size(); ++p)
    if (auto t = scan_trips(g.nodes[p], recorded_shape)) trips[p] = *t;
  if (!has_loop_node(g)) return trips;
  Model counted = oracle.model();
  const auto counters = add_trip_counters(counted);
  auto run = oracle_on(oracle, counted, cancel);
  if (!run) return run.error();
  for (const auto& [position, name] : counters)
    if (const Tensor* t = (*run)->recorded().find(name); t && t->rank() == 1) trips[position] = t->shape()[0];
  return trips;
}

struct Step {
  std::unique_ptr<Model> model;
  InlineResult inlined;
  UnrollResult unrolled;
  size_t changed() const { return inlined.inlined + unrolled.unrolled; }
  std::string what() const {
    if (inlined.inlined)
      return "inlined " + std::to_string(inlined.inlined) + " If node(s), " + std::to_string(inlined.body_nodes) +
             " nodes out of their taken branches";
    return "unrolled " + std::to_string(unrolled.unrolled) + " Loop/Scan node(s) into their " +
           std::to_string(unrolled.iterations) + " iterations, " + std::to_string(unrolled.body_nodes) +
           " nodes out of their bodies";
  }
};

}  // namespace

Expected<std::optional<FlattenedModel>> flatten_control_flow(Oracle& oracle, const Verdict& original,
                                                            const FlattenOptions& options,
                                                            const std::function<void(std::string)>& log,
                                                            std::stop_token stop) {
  std::optional<FlattenedModel> kept;
  Oracle* current = &oracle;
  std::atomic<bool> cancel{false};
  std::stop_callback on_stop(stop, [&] { cancel = true; });
  // A kind of node whose replacement changed the failure is not tried again.
  bool tried_ifs = !options.inline_if, tried_loops = !options.unroll_loops;
  for (int round = 0; round < kMaxRounds; ++round) {
    const Graph& g = current->model().graph;
    Step step;
    if (!tried_ifs && has_if_node(g)) {
      step.model = std::make_unique<Model>(current->model());
      step.inlined =
          inline_if_nodes(*step.model, [&](const std::string& name) { return recorded_condition(*current, name); });
    }
    if (step.changed() == 0 && !tried_loops && has_loop_or_scan(g)) {
      auto trips = trip_counts(*current, cancel);
      if (stop.stop_requested()) return make_error("interrupted");
      if (!trips) return trips.error();
      step.model = std::make_unique<Model>(current->model());
      step.unrolled = unroll_loop_nodes(
          *step.model,
          [&](size_t position) -> std::optional<int64_t> {
            auto it = trips->find(position);
            return it == trips->end() ? std::nullopt : std::optional<int64_t>(it->second);
          },
          // One budget over every round: nested loops unroll round after round.
          options.max_unrolled_nodes - std::min(options.max_unrolled_nodes, kept ? kept->unrolled.body_nodes : 0));
      for (const auto& why : step.unrolled.skipped)
        if (log) log("control flow: kept " + why);
    }
    if (step.changed() == 0) break;
    if (stop.stop_requested()) return make_error("interrupted");
    auto next = oracle_on(*current, *step.model, cancel);
    if (stop.stop_requested()) return make_error("interrupted");
    if (!next) return next.error();
    Verdict verdict = (*next)->evaluate(Candidate::whole(step.model->graph), &cancel);
    if (verdict.cancelled) return make_error("interrupted");
    (*next)->target().set(original.signature);
    if (verdict.invalid || (*next)->target().classify(verdict) != SignatureMatch::Same) {
      if (log)
        log("control flow: kept " + (step.inlined.inlined ? std::to_string(step.inlined.inlined) + " If node(s)"
                                                           : std::to_string(step.unrolled.unrolled) + " Loop/Scan node(s)") +
            ": with them replaced the model " +
            (verdict.invalid ? "cannot be checked (" + verdict.invalid_reason + ")"
             : verdict.signature.fails() ? "fails differently (" + verdict.signature.to_string() + ")"
                                         : std::string("passes")));
      (step.inlined.inlined ? tried_ifs : tried_loops) = true;
      continue;
    }
    FlattenedModel next_kept{std::move(step.model), std::move(*next), std::move(verdict),
                             kept ? kept->inlined : InlineResult{}, kept ? kept->unrolled : UnrollResult{}};
    next_kept.inlined.inlined += step.inlined.inlined;
    next_kept.inlined.body_nodes += step.inlined.body_nodes;
    next_kept.unrolled.unrolled += step.unrolled.unrolled;
    next_kept.unrolled.iterations += step.unrolled.iterations;
    next_kept.unrolled.body_nodes += step.unrolled.body_nodes;
    if (log) log("control flow: " + step.what() + "; the same failure");
    kept = std::move(next_kept);
    current = kept->oracle.get();
  }
  return kept;
}

Expected<std::optional<FlattenedModel>> flatten_when_failing(Oracle& oracle, const FlattenOptions& options,
                                                            const std::function<void(std::string)>& log,
                                                            std::stop_token stop) {
  const Graph& g = oracle.model().graph;
  if (!(options.inline_if && has_if_node(g)) && !(options.unroll_loops && has_loop_or_scan(g)))
    return std::optional<FlattenedModel>{};
  std::atomic<bool> cancelled{stop.stop_requested()};
  const std::stop_callback on_stop(stop, [&cancelled] { cancelled = true; });
  const Verdict original = oracle.evaluate(Candidate::whole(g), &cancelled);
  if (!original.fails()) return std::optional<FlattenedModel>{};
  return flatten_control_flow(oracle, original, options, log, stop);
}

}  // namespace reduce
