// The OpenCV DNN engine on tiny models: results, dtypes, requested intermediate values, one-line errors.
#include <gtest/gtest.h>

#include "adapters/engine_spec.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;

std::unique_ptr<Engine> opencv_engine() {
  auto engine = make_engine("opencv-inprocess");
  if (!engine.ok()) return nullptr;
  return std::move(engine).value();
}

#define REQUIRE_OPENCV(engine)                                        \
  auto engine = opencv_engine();                                      \
  if (!engine) GTEST_SKIP() << "OpenCV is not built in"

Tensor floats(Shape shape, std::vector<float> v) { return Tensor::from_vector(DType::Float, std::move(shape), v).value(); }

std::vector<float> values(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

const char* kConvRelu = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 1, 3, 3] X) => (float[1, 2, 2, 2] Y)
<float[2, 1, 2, 2] W = {1, 0, 0, 1, 0, -1, -1, 0}, float[2] B = {0.5, 0}>
{
  c = Conv<kernel_shape = [2, 2]>(X, W, B)
  Y = Relu(c)
}
)";

TEST(OpenCvEngine, RunsAConvolutionLikeTheReference) {
  REQUIRE_OPENCV(engine);
  Model m = parse_model(kConvRelu);
  TensorMap in{{"X", floats({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}};
  auto prepared = engine->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  auto out = (*prepared)->run(in);
  ASSERT_TRUE(out.ok()) << out.error().message();
  auto expected = make_reference_engine()->prepare(m).value()->run(in).value();
  EXPECT_EQ(out->at("Y").shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(values(out->at("Y")), values(expected.at("Y")));
}

TEST(OpenCvEngine, IntermediateValuesCanBeRequested) {
  REQUIRE_OPENCV(engine);
  Model m = parse_model(kConvRelu);
  TensorMap in{{"X", floats({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}};
  auto prepared = engine->prepare(m);
  ASSERT_TRUE(prepared.ok());
  RunOptions options;
  options.outputs = {"c", "Y"};
  auto out = (*prepared)->run(in, options);
  ASSERT_TRUE(out.ok()) << out.error().message();
  // Second filter: -(x[i][j+1] + x[i+1][j]) is negative everywhere: Relu zeroes what Conv computed.
  EXPECT_EQ(values(out->at("c")), (std::vector<float>{6.5, 8.5, 12.5, 14.5, -6, -8, -12, -14}));
  EXPECT_EQ(values(out->at("Y")), (std::vector<float>{6.5, 8.5, 12.5, 14.5, 0, 0, 0, 0}));
}

TEST(OpenCvEngine, OpenCv46NeedsTheOptionalKernelShapeOfConv) {
  REQUIRE_OPENCV(engine);
  std::string text = kConvRelu;
  text.replace(text.find("<kernel_shape = [2, 2]>"), 23, "");
  Model m = parse_model(text);
  auto prepared = engine->prepare(m);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.error().what,
            "OpenCV: Node [Conv@ai.onnx]:(onnx_node_output_0!c) parse error: (-5:Bad argument) kernel_size (or "
            "kernel_h and kernel_w) not specified in function 'getKernelSize'");
}

TEST(OpenCvEngine, ErrorsAreOneLineOpenCvMessages) {
  REQUIRE_OPENCV(engine);
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 13, "custom" : 1]>
g (float[3] X) => (float[3] Y)
{
  Y = custom.NoSuchOp(X)
}
)");
  auto prepared = engine->prepare(m);
  ASSERT_FALSE(prepared.ok());
  const std::string what = prepared.error().what;
  EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  EXPECT_EQ(what.rfind("OpenCV: ", 0), 0u) << what;
  EXPECT_NE(what.find("NoSuchOp"), std::string::npos) << what;
}

TEST(OpenCvEngine, TheDefaultOpenCvSpecIsIsolatedAndGivesTheSameResults) {
  if (!opencv_engine()) GTEST_SKIP() << "OpenCV is not built in";
  EngineEnvironment env;
  env.worker_program = std::string(REDUCE_BINARY_DIR) + "/reduce";
  auto engine = make_engine("opencv", env);
  ASSERT_TRUE(engine.ok()) << engine.error().message();
  EXPECT_EQ((*engine)->name(), "opencv");
  Model m = parse_model(kConvRelu);
  TensorMap in{{"X", floats({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}};
  auto prepared = (*engine)->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  auto out = (*prepared)->run(in);
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("Y")), (std::vector<float>{6.5, 8.5, 12.5, 14.5, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace reduce
