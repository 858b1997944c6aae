// Every FP32 model PyTorch 2.11 exported (../shared/fixtures/exported/) converts to FP16 and to BF16 as
// a valid model that the reference and ONNX Runtime run, with outputs within the low type's tolerance
// of ONNX Runtime's FP32 outputs on the fixture's sample (BF16 on ONNX Runtime: see below).
#include <gtest/gtest.h>

#include "adapters/engine_spec.h"
#include "core/precision_conversion.h"
#include "core/model_io.h"
#include "core/tensor_set.h"
#include "core/validate.h"
#include "oracle/comparison.h"
#include "test_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;

const fs::path kExported = fs::path(REDUCE_SHARED_FIXTURES) / "exported";

struct Case {
  std::string model;
  DType to;
  std::string engine;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.model + "_" + (info.param.to == DType::Float16 ? "fp16" : "bf16") + "_" + info.param.engine;
}

class ExportedMixedPrecision : public ::testing::TestWithParam<Case> {};

TEST_P(ExportedMixedPrecision, ConvertsToAValidModelThatRunsWithinTheTypesTolerance) {
  const Case& c = GetParam();
  auto model = load_model(kExported / c.model / "model.onnx");
  ASSERT_TRUE(model.ok()) << model.error().message();
  MixedPrecisionOptions options;
  options.to = c.to;
  auto converted = convert_to_mixed_precision(*model, options);
  ASSERT_TRUE(converted.ok()) << converted.error().message();
  EXPECT_GT(converted->converted_nodes, 0u);
  ASSERT_TRUE(validate_model(converted->model).ok());
  ASSERT_TRUE(check_model_for_engines(converted->model).ok()) << check_model_for_engines(converted->model).error().message();
  const fs::path data = kExported / c.model / "test_data_set_0";
  auto inputs = read_tensor_set(data, "input");
  auto expected = read_tensor_set(data, "output");
  ASSERT_TRUE(inputs.ok() && expected.ok());
  ASSERT_EQ(expected->size(), model->graph.outputs.size());
  for (size_t k = 0; k < expected->size(); ++k)
    if ((*expected)[k].name.empty()) (*expected)[k].name = model->graph.outputs[k].name;
  EngineEnvironment environment;
  environment.env = {"REDUCE_ORT_DIR=" + std::string(REDUCE_ORT_DIR)};
  auto engine = make_engine(c.engine, environment);
  ASSERT_TRUE(engine.ok()) << engine.error().message();
  auto prepared = (*engine)->prepare(converted->model);
  if (c.engine == "ort" && c.to == DType::BFloat16 && !prepared.ok()) {
    // ONNX Runtime's CPU provider has BF16 kernels for a few ops only: it accepts the model (its
    // own type checks pass) and then names the first op it cannot run. Anything else is ours.
    EXPECT_NE(prepared.error().message().find("Could not find an implementation for"), std::string::npos)
        << prepared.error().message();
    return;
  }
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  TensorMap feed;
  for (const auto& in : *inputs) feed[in.name] = in.tensor;
  auto outputs = (*prepared)->run(feed);
  ASSERT_TRUE(outputs.ok()) << outputs.error().message();
  // What a reduced-precision engine is held to by default, loosened for BF16's 8-bit mantissa.
  Tolerance t;
  t.atol = t.rtol = c.to == DType::Float16 ? 0.01 : 0.05;
  for (const auto& e : *expected) {
    ASSERT_TRUE(outputs->count(e.name)) << e.name;
    EXPECT_EQ(outputs->at(e.name).dtype(), DType::Float) << "outputs keep FP32";
    const auto cmp = compare_tensors(e.name, outputs->at(e.name), e.tensor, t);
    EXPECT_TRUE(cmp.passed) << e.name << ": max abs " << cmp.max_abs << ", " << cmp.mismatched << " of " << cmp.elements;
  }
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* m : {"bert_dynamo", "bert_torchscript_op17", "unet_attn_dynamo_op23", "vit_dynamo_external", "mobilenetv3_dynamo"})
    for (DType to : {DType::Float16, DType::BFloat16})
      for (const char* engine : {"ref", "ort"}) out.push_back({m, to, engine});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Exported, ExportedMixedPrecision, ::testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace reduce
