// `fp16[fp32=...]:SPEC` and `bf16[fp32=...]:SPEC`: what the two typed wrappers share.
#pragma once

#include "kinds/engine_kinds.h"

namespace reduce::kinds {

// The spec of a typed wrapper converting to `precision` (FP16 or BF16).
Expected<EngineSpec> parse_typed(const SpecText& text);
std::string print_typed(const EngineSpec& spec);
Expected<std::unique_ptr<Engine>> make_typed(const EngineSpec& spec, const EngineEnvironment& environment,
                                             Precision precision);

}  // namespace reduce::kinds
