// The tolerance sweep of `reduce precision`: one FP32 set per tolerance, and sweep.json.
#include <nlohmann/json.hpp>

#include "precision/precision.h"

namespace reduce {

const PrecisionOutcome* ToleranceSweep::tightest_found() const {
  for (auto it = rows.rbegin(); it != rows.rend(); ++it)
    if (it->outcome.kind == PrecisionOutcome::Kind::Found) return &it->outcome;
  return nullptr;
}

const PrecisionOutcome* ToleranceSweep::answer() const {
  if (const PrecisionOutcome* found = tightest_found()) return found;
  return rows.empty() ? nullptr : &rows.back().outcome;
}

Expected<ToleranceSweep> sweep_tolerances(const std::vector<Oracle*>& samples, PrecisionOptions options,
                                          const std::vector<double>& tolerances, std::stop_token stop,
                                          const std::function<void(const SweepRow&)>& on_row,
                                          const PrecisionSearch& search) {
  options.log = nullptr;
  ToleranceSweep sweep;
  for (double t : tolerances) {
    Tolerance tolerance = samples[0]->options().tolerance;
    tolerance.atol = tolerance.rtol = t;
    tolerance.by_element_type = false;  // each T is the tolerance of every output
    for (Oracle* oracle : samples) oracle->set_tolerance(tolerance);
    REDUCE_ASSIGN(PrecisionOutcome found, search ? search(samples, options, stop) : find_fp32_nodes(samples, options, stop));
    if (found.stopped) {
      sweep.stopped = true;
      break;
    }
    sweep.rows.push_back({t, std::move(found)});
    if (on_row) on_row(sweep.rows.back());
  }
  return sweep;
}

std::string sweep_json(const ToleranceSweep& sweep) {
  nlohmann::json rows = nlohmann::json::array();
  for (const SweepRow& r : sweep.rows) {
    nlohmann::json row{{"tolerance", r.tolerance}, {"checks", r.outcome.checks}};
    const bool quantized = r.outcome.quantization.has_value();
    row["outcome"] = r.outcome.kind == PrecisionOutcome::Kind::Found         ? "found"
                     : r.outcome.kind == PrecisionOutcome::Kind::DoesNotFail ? "does not fail"
                     : quantized                                             ? "fails even in float"
                                                                             : "fails even in FP32";
    const char* key = quantized ? "float_nodes" : "fp32_nodes";
    row[key] = nlohmann::json::array();
    for (const auto& p : r.outcome.pinned) row[key].push_back(p.name);
    rows.push_back(row);
  }
  return rows.dump(2) + "\n";
}

}  // namespace reduce
