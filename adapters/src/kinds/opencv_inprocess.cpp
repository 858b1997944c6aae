// `opencv-inprocess`: OpenCV DNN in this process.
#include "kinds/engine_kinds.h"
#include "spec/engine_factories.h"

namespace reduce::kinds {

const KindOps OpenCVInProcess = {
    parse_no_options,
    [](const EngineSpec&) { return std::string(); },
    [](const EngineSpec&, const EngineEnvironment& environment) -> Expected<std::unique_ptr<Engine>> { return make_opencv_engine(environment); },
};

}  // namespace reduce::kinds
