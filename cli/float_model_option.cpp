// --float-model: a quantized (Q/DQ) model compared with its float model's outputs (precision, compare).
#include "float_model_option.h"

#include "adapters/engine_spec.h"
#include "core/model_io.h"
#include "core/quantized_nodes.h"

namespace reduce::cli {

namespace po = boost::program_options;

ExpectedFromInputs float_model_expectations(const po::variables_map& vm, std::optional<QuantizedSearchPlan>& plan,
                                            bool without_float_model) {
  return [&vm, &plan, without_float_model](const Model& model,
                                           const std::vector<InputSample>& samples) -> Expected<std::vector<TensorSample>> {
    std::optional<std::string> float_path;
    if (vm.count("float-model")) float_path = vm["float-model"].as<std::string>();
    const auto spec = parse_engine_spec(vm["engine"].as<std::string>());
    if (!float_path && (!without_float_model || !has_qdq_nodes(model.graph) || (spec && spec->controls_precision())))
      return std::vector<TensorSample>{};
    if (float_path && vm.count("expected"))
      return Error{"--expected", "the float model (--float-model) gives the expected values; give one of them"};
    const std::string model_path = vm["model"].as<std::string>();
    std::optional<Model> float_model;
    if (float_path) {
      REDUCE_ASSIGN(Model loaded, load_model(*float_path));
      float_model = std::move(loaded);
    }
    REDUCE_ASSIGN(auto reference, make_engine(vm["reference"].as<std::string>()));
    auto planned = plan_quantized_search(model, std::move(float_model), float_path.value_or(""), *reference);
    if (!planned) return planned.error().at(model_path);
    plan = std::move(*planned);
    std::vector<TensorSample> out;
    if (vm.count("expected")) return out;  // the float outputs are given
    const std::string source = float_path ? "the float model " + *float_path : "the model with every Q/DQ pair folded";
    for (const auto& sample : samples) {
      REDUCE_ASSIGN(auto outputs, float_model_outputs(*plan, model, *reference, sample.inputs));
      out.push_back({source, std::move(outputs)});
    }
    return out;
  };
}

}  // namespace reduce::cli
