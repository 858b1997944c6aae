// The reference executor's extension points, for engines that run rewritten graphs with the same interpreter.
#pragma once

#include <functional>
#include <memory>

#include "engine/engine.h"
#include "kernel.h"

namespace reduce::ref {

struct ExecutorHooks {
  // Builds the kernel of a node instead of the registry; a null kernel means "use the registry".
  std::function<Expected<KernelPtr>(const Node& node, int64_t opset)> make_kernel;
  // Called on every value a node produces, right after its kernel ran (e.g. to round it to a
  // precision, unless the node is one kept in FP32).
  std::function<Status(const Node& node, Tensor& value)> finish_output;
};

// Prepares a model on the reference executor with the given hooks; `threads` and `limits` as
// make_reference_engine. The model must outlive the prepared model.
Expected<std::unique_ptr<PreparedModel>> prepare_with_hooks(const Model& model, int threads, ExecutorHooks hooks,
                                                            RunLimits limits = {});

}  // namespace reduce::ref
