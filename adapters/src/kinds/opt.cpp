// `opt[:OPTIONS]`: the optimized engine (precision, FP32 nodes, faults, disabled passes).
#include "engine/optimized.h"
#include "kinds/engine_kinds.h"

namespace reduce::kinds {

const KindOps Opt = {
    .parse = [](const SpecText& text) -> Expected<EngineSpec> {
      REDUCE_TRY(no_bracket(text));
      EngineSpec spec;
      REDUCE_ASSIGN(spec.opt, parse_optimized_options(text.rest));
      return spec;
    },
    .print = [](const EngineSpec& spec) { return colon_options(to_string(spec.opt)); },
    .make = [](const EngineSpec& spec, const EngineEnvironment& environment) -> Expected<std::unique_ptr<Engine>> {
      OptimizedOptions opt = spec.opt;
      opt.threads = environment.threads;
      opt.limits = environment.limits();
      return make_optimized_engine(opt);
    },
    .fp32 = [](EngineSpec& spec) { return &spec.opt.fp32_nodes; },
    .precision = [](const EngineSpec& spec) { return spec.opt.precision; },
    .controls_precision = [](const EngineSpec& spec) { return spec.opt.precision != Precision::FP32; },
};

}  // namespace reduce::kinds
