// --float-model: a quantized (Q/DQ) MODEL whose outputs are compared with its float model's
// (`precision` searches the nodes to leave in float, `compare` shows the error each quantized node adds).
#pragma once

#include <boost/program_options.hpp>

#include <optional>

#include "oracle_options.h"
#include "precision/float_model.h"

namespace reduce::cli {

// The float model's outputs as each sample's expected values, when MODEL is a Q/DQ model compared
// with its float model: with --float-model, or (`without_float_model`) on an engine without
// per-node precision, against MODEL with every Q/DQ pair folded; nothing otherwise. Fills `plan`
// when it applies. Errors: a float model that cannot be loaded or does not match, --expected too,
// a MODEL with nothing quantized.
ExpectedFromInputs float_model_expectations(const boost::program_options::variables_map& vm,
                                            std::optional<QuantizedSearchPlan>& plan, bool without_float_model);

}  // namespace reduce::cli
