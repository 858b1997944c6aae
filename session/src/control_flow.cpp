// Inlining the branches the recorded run took, round by round, while the failure stays the same.
#include "session/control_flow.h"

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

}  // namespace

Expected<std::optional<FlattenedModel>> inline_taken_branches(Oracle& oracle, const Verdict& original,
                                                             const std::function<void(std::string)>& log,
                                                             std::stop_token stop) {
  std::optional<FlattenedModel> kept;
  Oracle* current = &oracle;
  for (int round = 0; round < kMaxRounds && has_if_node(current->model().graph); ++round) {
    if (stop.stop_requested()) return make_error("interrupted");
    auto model = std::make_unique<Model>(current->model());
    const InlineResult inlined =
        inline_if_nodes(*model, [&](const std::string& name) { return recorded_condition(*current, name); });
    if (inlined.inlined == 0) break;
    std::atomic<bool> cancel{false};
    std::stop_callback on_stop(stop, [&] { cancel = true; });
    OracleOptions options = current->options();
    options.record.cancel = &cancel;  // a stop abandons the reference run
    auto next = Oracle::create(*model, current->inputs(), std::move(options));
    if (stop.stop_requested()) return make_error("interrupted");
    if (!next) return next.error();
    Verdict verdict = (*next)->evaluate(Candidate::whole(model->graph), &cancel);
    if (verdict.cancelled) return make_error("interrupted");
    (*next)->set_target(original.signature);
    if (verdict.invalid || (*next)->classify(verdict) != SignatureMatch::Same) {
      if (log)
        log("control flow: kept " + std::to_string(inlined.inlined) + " If node(s): with the taken branch inlined the model " +
            (verdict.invalid ? "cannot be checked (" + verdict.invalid_reason + ")"
             : verdict.signature.fails() ? "fails differently (" + verdict.signature.to_string() + ")"
                                         : std::string("passes")));
      break;
    }
    InlineResult total = kept ? kept->inlined : InlineResult{};
    total.inlined += inlined.inlined;
    total.body_nodes += inlined.body_nodes;
    if (log)
      log("control flow: inlined " + std::to_string(inlined.inlined) + " If node(s), " +
          std::to_string(inlined.body_nodes) + " nodes out of their taken branches; the same failure");
    kept = FlattenedModel{std::move(model), std::move(*next), std::move(verdict), total};
    current = kept->oracle.get();
  }
  return kept;
}

}  // namespace reduce
