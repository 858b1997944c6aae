// `fp16[fp32=NODE+NODE]:SPEC`: SPEC runs each candidate converted to FP16 at the ONNX level, the
// nodes given kept in FP32: a strongly typed FP16 engine (TensorRT 11's contract) out of any engine.
#include "kinds/typed_kinds.h"

namespace reduce::kinds {

const KindOps Fp16 = {
    .parse = parse_typed,
    .print = print_typed,
    .make = [](const EngineSpec& spec, const EngineEnvironment& environment) { return make_typed(spec, environment, Precision::FP16); },
    .fp32 = [](EngineSpec& spec) { return &spec.fp32_nodes; },
    .precision = [](const EngineSpec&) { return Precision::FP16; },
    .controls_precision = [](const EngineSpec&) { return true; },
};

}  // namespace reduce::kinds
