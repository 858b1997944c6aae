// The optimized engine (every pass, fp32, no fault) agrees with the reference engine on the real npm
// models: max|diff| <= 1e-4 * max|ref| + 1e-5 per output; and the passes fire on them (every pass on
// PP-OCR rec).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iostream>

#include "core/model_io.h"
#include "engine/optimized.h"
#include "oracle/inputs.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;

struct RealModelCase {
  std::string label;
  std::string file;
  std::vector<std::pair<std::string, Shape>> shapes;
  std::map<std::string, ValueRange, std::less<>> ranges;
  std::vector<std::string> passes_that_fire;  // measured; PP-OCR rec exercises every pass
};

void PrintTo(const RealModelCase& c, std::ostream* os) { *os << c.label; }

const std::vector<std::string> kEveryPass = {"constant-folding", "conv-bn-fold", "matmul-add-gemm", "layernorm-fusion",
                                             "attention-fusion", "activation-fusion", "static-broadcast"};

// The cases of ort_crosscheck_test.cpp (PP-OCR det at 64x64 only, to stay fast). Silero VAD computes
// everything inside If branches, which the passes (main graph only) leave alone.
const std::vector<RealModelCase>& real_model_cases() {
  static const std::vector<RealModelCase> cases = {
      {"ppocr_det_64", "ppocr_det.onnx", {{"x", {1, 3, 64, 64}}}, {},
       {"conv-bn-fold", "activation-fusion", "static-broadcast"}},
      {"ppocr_rec", "ppocr_rec.onnx", {{"x", {1, 3, 48, 320}}}, {}, kEveryPass},
      {"ppocr_cls", "ppocr_cls.onnx", {{"x", {1, 3, 48, 192}}}, {},
       {"constant-folding", "conv-bn-fold", "matmul-add-gemm", "activation-fusion", "static-broadcast"}},
      {"oww_hello_deepa", "oww_hello_deepa.onnx", {}, {}, {"layernorm-fusion", "activation-fusion"}},
      {"oww_hello_deepa_old", "oww_hello_deepa_old.onnx", {}, {}, {"layernorm-fusion", "activation-fusion"}},
      {"oww_namaste_deepa", "oww_namaste_deepa.onnx", {}, {}, {"layernorm-fusion", "activation-fusion"}},
      {"silero_vad_v5", "silero_vad_v5.onnx", {{"input", {1, 512}}, {"state", {2, 1, 128}}},
       {{"state", {0, 0}}, {"sr", {16000, 16000}}}, {}},
  };
  return cases;
}

class OptimizedRealModels : public ::testing::TestWithParam<RealModelCase> {};

TEST_P(OptimizedRealModels, MatchesTheReferenceWithEveryPass) {
  const RealModelCase& c = GetParam();
  const char* cache = std::getenv("REDUCE_MODEL_CACHE");
  ASSERT_NE(cache, nullptr) << "REDUCE_MODEL_CACHE must be set (CTest sets it)";
  auto model = load_model(fs::path(cache) / c.file);
  ASSERT_TRUE(model.ok()) << model.error().message();
  for (const auto& [name, shape] : c.shapes) ASSERT_TRUE(set_input_shape(*model, name, shape).ok()) << name;
  RandomInputOptions options;
  options.seed = 2026;
  options.ranges = c.ranges;
  auto inputs = make_random_inputs(model->graph, options);
  ASSERT_TRUE(inputs.ok()) << inputs.error().message();
  TensorMap feed;
  for (const auto& t : *inputs) feed[t.name] = t.tensor;

  auto ref = make_reference_engine(2)->prepare(*model);
  ASSERT_TRUE(ref.ok()) << ref.error().message();
  auto expected = (*ref)->run(feed);
  ASSERT_TRUE(expected.ok()) << expected.error().message();
  OptimizedOptions fp32;
  fp32.threads = 2;
  auto opt = make_optimized_engine(fp32)->prepare(*model);
  ASSERT_TRUE(opt.ok()) << opt.error().message();
  auto actual = (*opt)->run(feed);
  ASSERT_TRUE(actual.ok()) << actual.error().message();
  auto report = dynamic_cast<OptimizedPreparedModel&>(**opt).report();
  ASSERT_TRUE(report.ok());
  std::cout << c.label << ": " << report->to_string() << "\n";
  for (const auto& pass : c.passes_that_fire) EXPECT_GT(report->fired(pass), 0) << c.label << ": " << pass;

  for (const auto& [name, r] : *expected) {
    const Tensor& o = actual->at(name);
    ASSERT_EQ(r.shape(), o.shape()) << name;
    ASSERT_EQ(r.dtype(), o.dtype()) << name;
    double max_ref = 0, max_diff = 0;
    for (uint64_t i = 0; i < r.elements(); ++i) {
      const double a = r.element_as_double(i), b = o.element_as_double(i);
      ASSERT_TRUE(std::isfinite(b)) << name << " element " << i;
      max_ref = std::max(max_ref, std::abs(a));
      max_diff = std::max(max_diff, std::abs(a - b));
    }
    EXPECT_LE(max_diff, 1e-4 * max_ref + 1e-5) << c.label << " output '" << name << "'";
    std::cout << c.label << " output '" << name << "' " << shape_to_string(r.shape()) << ": max|diff| " << max_diff
              << ", max|ref| " << max_ref << "\n";
  }
}

// Same inputs give bit-identical outputs with 1 and 2 threads (fp16: rounding included).
TEST(OptimizedDeterminism, PpocrRecIsBitIdenticalWithOneAndTwoThreadsInFp16) {
  const char* cache = std::getenv("REDUCE_MODEL_CACHE");
  ASSERT_NE(cache, nullptr) << "REDUCE_MODEL_CACHE must be set (CTest sets it)";
  auto model = load_model(fs::path(cache) / "ppocr_rec.onnx");
  ASSERT_TRUE(model.ok()) << model.error().message();
  ASSERT_TRUE(set_input_shape(*model, "x", {1, 3, 48, 320}).ok());
  auto inputs = make_random_inputs(model->graph, {});
  ASSERT_TRUE(inputs.ok());
  TensorMap feed;
  for (const auto& t : *inputs) feed[t.name] = t.tensor;
  std::vector<TensorMap> outputs;
  for (int threads : {1, 2}) {
    OptimizedOptions options;
    options.precision = Precision::FP16;
    options.threads = threads;
    auto prepared = make_optimized_engine(options)->prepare(*model);
    ASSERT_TRUE(prepared.ok()) << prepared.error().message();
    auto out = (*prepared)->run(feed);
    ASSERT_TRUE(out.ok()) << out.error().message();
    outputs.push_back(std::move(*out));
  }
  for (const auto& [name, t] : outputs[0]) EXPECT_TRUE(t.equals(outputs[1].at(name))) << name;
}

INSTANTIATE_TEST_SUITE_P(RealModels, OptimizedRealModels, ::testing::ValuesIn(real_model_cases()),
                         [](const auto& info) { return info.param.label; });

}  // namespace
}  // namespace reduce
