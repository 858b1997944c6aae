// OpenCV 4.6 DNN on the real npm models (shapes fixed, seeded inputs) against the reference engine:
// pins which models pass and the real OpenCV failures they show.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "core/model_io.h"
#include "adapters/engine_spec.h"
#include "oracle/inputs.h"

namespace reduce {
namespace {

struct RealCase {
  const char* model;
  std::vector<std::pair<std::string, Shape>> shapes;
  std::map<std::string, ValueRange, std::less<>> ranges;
};

std::string model_path(const char* name) {
  const char* env = std::getenv("REDUCE_MODEL_CACHE");
  return (env ? std::string(env) : std::string(REDUCE_SOURCE_DIR) + "/.cache/models") + "/" + name;
}

// What OpenCV did with a model: an error message, or the largest |opencv - reference| and
// whether every element is within the fp32 tolerance |a-b| <= 1e-4 + 1e-3*|b|.
struct OpenCvOutcome {
  std::string error;
  double max_abs_diff = 0;
  bool within_tolerance = true;
};

OpenCvOutcome run_on_opencv(const RealCase& c) {
  auto loaded = load_model(model_path(c.model));
  if (!loaded.ok()) return {"load: " + loaded.error().message()};
  Model model = std::move(loaded).value();
  for (const auto& [name, shape] : c.shapes)
    if (Status s = set_input_shape(model, name, shape); !s.ok()) return {"shape: " + s.error().message()};
  RandomInputOptions options;
  options.ranges = c.ranges;
  auto inputs = make_random_inputs(model.graph, options);
  if (!inputs.ok()) return {"inputs: " + inputs.error().message()};
  TensorMap feed;
  for (const auto& t : *inputs) feed[t.name] = t.tensor;
  auto expected = make_reference_engine()->prepare(model).value()->run(feed);
  if (!expected.ok()) return {"reference: " + expected.error().message()};
  auto engine = make_engine("opencv-inprocess");
  if (!engine.ok()) return {engine.error().message()};
  auto prepared = (*engine)->prepare(model);
  if (!prepared.ok()) return {prepared.error().what};
  auto actual = (*prepared)->run(feed);
  if (!actual.ok()) return {actual.error().what};
  OpenCvOutcome outcome;
  for (const auto& [name, want] : *expected) {
    const Tensor& got = actual->at(name);
    if (got.shape() != want.shape() || got.dtype() != want.dtype())
      return {"output '" + name + "' is " + shape_to_string(got.shape()) + ", expected " + shape_to_string(want.shape())};
    for (uint64_t i = 0; i < want.elements(); ++i) {
      const double a = got.element_as_double(i), b = want.element_as_double(i);
      const double diff = std::abs(a - b);
      outcome.max_abs_diff = std::max(outcome.max_abs_diff, std::isnan(diff) ? INFINITY : diff);
      if (!(diff <= 1e-4 + 1e-3 * std::abs(b))) outcome.within_tolerance = false;
    }
  }
  return outcome;
}

#define REQUIRE_OPENCV()                                          \
  if (!make_engine("opencv-inprocess").ok()) GTEST_SKIP() << "OpenCV is not built in"

void expect_pass(const RealCase& c) {
  const OpenCvOutcome o = run_on_opencv(c);
  EXPECT_EQ(o.error, "") << c.model;
  EXPECT_TRUE(o.within_tolerance) << c.model << ": max abs diff " << o.max_abs_diff;
  std::cout << c.model << ": pass, max abs diff " << o.max_abs_diff << "\n";
}

void expect_error(const RealCase& c, const std::string& fragment) {
  const OpenCvOutcome o = run_on_opencv(c);
  EXPECT_NE(o.error.find(fragment), std::string::npos) << c.model << ": " << (o.error.empty() ? "no error" : o.error);
  std::cout << c.model << ": " << o.error << "\n";
}

const ValueRange kSampleRate16k{16000, 16000};

// Results found with `reduce run MODEL --engine opencv` (docs/engine.md has the table).
TEST(OpenCvRealModels, OpenWakeWordLayerNormDivIsRejectedByTheImporter) {
  REQUIRE_OPENCV();
  for (const char* model : {"oww_hello_deepa.onnx", "oww_hello_deepa_old.onnx", "oww_namaste_deepa.onnx"})
    expect_error({model, {}, {}},
                 "Node [Div@ai.onnx]:(onnx_node!/layernorm1/Div) parse error: (-215:Assertion failed) "
                 "axis != outShape.size() in function 'parseMul'");
}

TEST(OpenCvRealModels, PpOcrDetectionClipWithMinMaxInputsIsRejected) {
  REQUIRE_OPENCV();
  expect_error({"ppocr_det.onnx", {{"x", {1, 3, 64, 64}}}, {}},
               "Node [Clip@ai.onnx]:(onnx_node!p2o.Clip.0) parse error: (-2:Unspecified error) in function 'parseClip' "
               "(expected: 'node_proto.input_size() == 1'), where 'node_proto.input_size()' is 3");
}

TEST(OpenCvRealModels, PpOcrRecognitionFailsAShapeAssertionAtRunTime) {
  REQUIRE_OPENCV();
  expect_error({"ppocr_rec.onnx", {{"x", {1, 3, 48, 320}}}, {}},
               "(-215:Assertion failed) start <= (int)shape.size() && end <= (int)shape.size() && start <= end "
               "in function 'total'");
}

TEST(OpenCvRealModels, PpOcrClassifierPassesWithinFp32Tolerance) {
  REQUIRE_OPENCV();
  expect_pass({"ppocr_cls.onnx", {{"x", {1, 3, 48, 192}}}, {}});
}

TEST(OpenCvRealModels, SileroVadIfSubgraphsAreNotSupported) {
  REQUIRE_OPENCV();
  expect_error({"silero_vad_v5.onnx", {{"input", {1, 512}}, {"state", {2, 1, 128}}}, {{"sr", kSampleRate16k}}},
               "Node [If@ai.onnx]:(onnx_node!If_0) parse error: (-213:The function/feature is not implemented) "
               "DNN/ONNX/Attribute[else_branch]: 'Graph' is not supported in function 'getLayerParams'");
}

}  // namespace
}  // namespace reduce
