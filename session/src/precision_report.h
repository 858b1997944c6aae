// Parts shared by the reports of `reduce precision`'s two searches (FP32 keep sets, quantized nodes
// left in float).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "oracle/verdict.h"

namespace reduce {

// The worst output error of a verdict, as error / tolerance (0 when it ran and passed cleanly).
double worst_ratio(const Verdict& v);
// {fails, signature, worst_error_over_tolerance}.
nlohmann::json verdict_json(const Verdict& v);
// "%.3g".
std::string number(double x);

}  // namespace reduce
