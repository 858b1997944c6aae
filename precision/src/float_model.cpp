// A quantized model's expected values from its float model (float_model.h).
#include "precision/float_model.h"

#include "adapters/engine_spec.h"
#include "core/model_io.h"
#include "core/quantized_nodes.h"

namespace reduce {

Expected<std::vector<TensorSample>> float_model_expectations(const FloatModelRequest& request, const Model& model,
                                                             const std::vector<InputSample>& samples,
                                                             std::optional<QuantizedSearchPlan>& plan) {
  const std::optional<std::string>& float_path = request.float_model;
  if (!float_path && (!request.fold_without_float_model || !has_qdq_nodes(model.graph) || request.engine.controls_precision()))
    return std::vector<TensorSample>{};
  if (float_path && request.expected_given)
    return Error{"--expected", "the float model (--float-model) gives the expected values; give one of them"};
  std::optional<Model> float_model;
  if (float_path) {
    REDUCE_ASSIGN(Model loaded, load_model(*float_path));
    float_model = std::move(loaded);
  }
  REDUCE_ASSIGN(auto reference, make_engine(request.reference));
  auto planned = plan_quantized_search(model, std::move(float_model), float_path.value_or(""), *reference);
  if (!planned) return planned.error().at(request.model_path);
  plan = std::move(*planned);
  std::vector<TensorSample> out;
  if (request.expected_given) return out;  // the float outputs are given
  const std::string source = float_path ? "the float model " + *float_path : "the model with every Q/DQ pair folded";
  for (const auto& sample : samples) {
    REDUCE_ASSIGN(auto outputs, float_model_outputs(*plan, model, *reference, sample.inputs));
    out.push_back({source, std::move(outputs)});
  }
  return out;
}

}  // namespace reduce
