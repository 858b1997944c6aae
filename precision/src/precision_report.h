// Parts shared by the reports of `reduce precision`'s two searches (FP32 keep sets, quantized nodes
// left in float).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "oracle/verdict.h"
#include "precision/precision.h"

namespace reduce {

// The worst output error of a verdict, as error / tolerance (0 when it ran and passed cleanly).
double worst_ratio(const Verdict& v);
// {fails, signature, worst_error_over_tolerance}.
nlohmann::json verdict_json(const Verdict& v);
// "%.3g".
std::string number(double x);
// The report.json keys both searches share, `outcome` worded by the caller: outcome, candidates,
// samples, failing_sample, checks, strategy, one_minimal, stopped, seconds, before, after,
// renamed_nodes, named_nodes, confirm.
void add_search_json(nlohmann::json& j, const PrecisionOutcome& out, const char* outcome);

}  // namespace reduce
