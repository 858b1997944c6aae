// The reference engine agrees with ONNX Runtime (onnxruntime-node 1.30, run by scripts/ort/run_ort.js)
// on the real npm models, on seeded random inputs: max|diff| <= 1e-4 * max|ref| + 1e-5 per output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "core/model_io.h"
#include "core/tensor_file.h"
#include "core/tensor_set.h"
#include "engine/engine.h"
#include "oracle/inputs.h"
#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::run_process;
using testing::TempDir;

struct CrossCheckCase {
  std::string label;
  std::string file;
  std::vector<std::pair<std::string, Shape>> shapes;
  std::map<std::string, ValueRange, std::less<>> ranges;
};

void PrintTo(const CrossCheckCase& c, std::ostream* os) { *os << c.label; }

fs::path env_path(const char* name) {
  const char* v = std::getenv(name);
  return v ? fs::path(v) : fs::path();
}

class OrtCrossCheck : public ::testing::TestWithParam<CrossCheckCase> {};

TEST_P(OrtCrossCheck, ReferenceAgreesWithOnnxRuntime) {
  const CrossCheckCase& c = GetParam();
  const fs::path models = env_path("REDUCE_MODEL_CACHE");
  const fs::path ort = env_path("REDUCE_ORT_DIR").empty() ? fs::path(REDUCE_ORT_DIR) : env_path("REDUCE_ORT_DIR");
  ASSERT_FALSE(models.empty()) << "REDUCE_MODEL_CACHE must be set (CTest sets it)";
  const fs::path model_path = models / c.file;
  auto model = load_model(model_path);
  ASSERT_TRUE(model.ok()) << model.error().message();
  for (const auto& [name, shape] : c.shapes) ASSERT_TRUE(set_input_shape(*model, name, shape).ok()) << name;
  RandomInputOptions options;
  options.seed = 2026;
  options.ranges = c.ranges;
  auto inputs = make_random_inputs(model->graph, options);
  ASSERT_TRUE(inputs.ok()) << inputs.error().message();

  TempDir dir;
  fs::create_directories(dir / "in");
  TensorMap feed;
  for (size_t k = 0; k < inputs->size(); ++k) {
    ASSERT_TRUE(write_npy(dir / "in" / ("input_" + std::to_string(k) + ".npy"), (*inputs)[k].tensor).ok());
    feed[(*inputs)[k].name] = (*inputs)[k].tensor;
  }
  const auto ran = run_process({"node", std::string(REDUCE_SOURCE_DIR) + "/scripts/ort/run_ort.js", ort.string(),
                                model_path.string(), (dir / "in").string(), (dir / "out").string(), "--threads", "2"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;

  auto prepared = make_reference_engine(2)->prepare(*model);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  auto outputs = (*prepared)->run(feed);
  ASSERT_TRUE(outputs.ok()) << outputs.error().message();
  for (size_t k = 0; k < model->graph.outputs.size(); ++k) {
    const std::string& name = model->graph.outputs[k].name;
    auto expected = read_npy(dir / "out" / ("output_" + std::to_string(k) + ".npy"));
    ASSERT_TRUE(expected.ok()) << expected.error().message();
    const Tensor& ref = outputs->at(name);
    ASSERT_EQ(ref.shape(), expected->shape()) << name;
    ASSERT_EQ(ref.dtype(), expected->dtype()) << name;
    double max_ref = 0, max_diff = 0;
    for (uint64_t i = 0; i < ref.elements(); ++i) {
      const double r = ref.element_as_double(i), o = expected->element_as_double(i);
      ASSERT_TRUE(std::isfinite(r) && std::isfinite(o)) << name << " element " << i << ": ref " << r << ", ort " << o;
      max_ref = std::max(max_ref, std::abs(r));
      max_diff = std::max(max_diff, std::abs(r - o));
    }
    EXPECT_LE(max_diff, 1e-4 * max_ref + 1e-5) << c.label << " output '" << name << "': max|ref| " << max_ref;
    std::cout << c.label << " output '" << name << "' " << shape_to_string(ref.shape()) << ": max|diff| " << max_diff
              << ", max|ref| " << max_ref << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(
    RealModels, OrtCrossCheck,
    ::testing::Values(
        CrossCheckCase{"ppocr_det_64", "ppocr_det.onnx", {{"x", {1, 3, 64, 64}}}, {}},
        CrossCheckCase{"ppocr_det_640", "ppocr_det.onnx", {{"x", {1, 3, 640, 640}}}, {}},
        CrossCheckCase{"ppocr_rec", "ppocr_rec.onnx", {{"x", {1, 3, 48, 320}}}, {}},
        CrossCheckCase{"ppocr_cls", "ppocr_cls.onnx", {{"x", {1, 3, 48, 192}}}, {}},
        CrossCheckCase{"oww_hello_deepa", "oww_hello_deepa.onnx", {}, {}},
        CrossCheckCase{"oww_hello_deepa_old", "oww_hello_deepa_old.onnx", {}, {}},
        CrossCheckCase{"oww_namaste_deepa", "oww_namaste_deepa.onnx", {}, {}},
        // One 512-sample chunk at 16 kHz from the zero state.
        CrossCheckCase{"silero_vad_v5",
                       "silero_vad_v5.onnx",
                       {{"input", {1, 512}}, {"state", {2, 1, 128}}},
                       {{"state", {0, 0}}, {"sr", {16000, 16000}}}}),
    [](const auto& info) { return info.param.label; });

}  // namespace
}  // namespace reduce
