// --float-model: the options of a quantized (Q/DQ) model compared with its float model's outputs
// (precision, compare), handed to precision/float_model.h.
#include "float_model_option.h"

namespace reduce::cli {

namespace po = boost::program_options;

namespace {

Expected<FloatModelRequest> float_model_request(const po::variables_map& vm, bool without_float_model) {
  FloatModelRequest request;
  if (vm.count("float-model")) request.float_model = vm["float-model"].as<std::string>();
  request.model_path = vm["model"].as<std::string>();
  REDUCE_ASSIGN(request.engine, engine_spec_option("--engine", vm["engine"].as<std::string>()));
  REDUCE_ASSIGN(request.reference, engine_spec_option("--reference", vm["reference"].as<std::string>()));
  request.expected_given = vm.count("expected") > 0;
  request.fold_without_float_model = without_float_model;
  return request;
}

}  // namespace

// The options are read when the samples are (after open_oracle checked them).
ExpectedFromInputs float_model_expectations(const po::variables_map& vm, std::optional<QuantizedSearchPlan>& plan,
                                            bool without_float_model) {
  return [&vm, &plan, without_float_model](const Model& model,
                                           const std::vector<InputSample>& samples) -> Expected<std::vector<TensorSample>> {
    REDUCE_ASSIGN(const FloatModelRequest request, float_model_request(vm, without_float_model));
    return reduce::float_model_expectations(request, model, samples, plan);
  };
}

}  // namespace reduce::cli
