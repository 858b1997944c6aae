// `opencv`: OpenCV DNN in a worker process (`opencv-inprocess` there), so that its crashes are verdicts.
#include "reproduction/scripts.h"
#include "kinds/engine_kinds.h"
#include "factories/engine_factories.h"

namespace reduce::kinds {

const KindOps OpenCV = {
    .parse = parse_no_options,
    .print = [](const EngineSpec&) { return std::string(); },
    .make = [](const EngineSpec&, const EngineEnvironment& environment) -> Expected<std::unique_ptr<Engine>> {
      REDUCE_ASSIGN(auto in_process, make_opencv_engine(environment));  // says when OpenCV was not built in
      return make_isolated_engine("opencv-inprocess", environment, in_process->release());
    },
    .reproduce = repro::opencv_scripts,
};

}  // namespace reduce::kinds
