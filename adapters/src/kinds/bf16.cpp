// `bf16[fp32=NODE+NODE]:SPEC`: SPEC runs each candidate converted to BF16 at the ONNX level, the
// nodes given kept in FP32.
#include "kinds/typed_kinds.h"

namespace reduce::kinds {

const KindOps Bf16 = {
    .parse = parse_typed,
    .print = print_typed,
    .make = [](const EngineSpec& spec, const EngineEnvironment& environment) { return make_typed(spec, environment, Precision::BF16); },
    .fp32 = [](EngineSpec& spec) { return &spec.fp32_nodes; },
    .precision = [](const EngineSpec&) { return Precision::BF16; },
    .controls_precision = [](const EngineSpec&) { return true; },
};

}  // namespace reduce::kinds
