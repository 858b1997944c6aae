// run_streaming: one way to receive a run's values one at a time, whether or not the engine streams.
#include "engine/engine.h"

namespace reduce {

Status run_streaming(PreparedModel& prepared, const TensorMap& inputs, RunOptions options,
                     const std::function<Status(const std::string& name, Tensor value)>& on_output) {
  options.on_output = on_output;
  REDUCE_ASSIGN(TensorMap rest, prepared.run(inputs, options));
  // An engine that does not stream returned them all; hand them over, freeing each once taken.
  while (!rest.empty()) {
    auto node = rest.extract(rest.begin());
    REDUCE_TRY(on_output(node.key(), std::move(node.mapped())));
  }
  return {};
}

}  // namespace reduce
