// `opencv-inprocess`: OpenCV DNN in this process.
#include "reproduction/scripts.h"
#include "kinds/engine_kinds.h"
#include "factories/engine_factories.h"

namespace reduce::kinds {

const KindOps OpenCVInProcess = {
    .parse = parse_no_options,
    .print = [](const EngineSpec&) { return std::string(); },
    .make = [](const EngineSpec&, const EngineEnvironment& environment) -> Expected<std::unique_ptr<Engine>> { return make_opencv_engine(environment); },
    .reproduce = repro::opencv_scripts,
};

}  // namespace reduce::kinds
