// The reference engine gives bit-identical outputs for every thread count, on real models.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/model_io.h"
#include "engine/engine.h"
#include "oracle/inputs.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;

TensorMap run_with_threads(const Model& model, const TensorMap& feed, int threads) {
  auto prepared = make_reference_engine(threads)->prepare(model);
  EXPECT_TRUE(prepared.ok()) << prepared.error().message();
  if (!prepared.ok()) return {};
  auto out = (*prepared)->run(feed);
  EXPECT_TRUE(out.ok()) << out.error().message();
  return out.ok() ? std::move(*out) : TensorMap{};
}

void expect_same_for_1_and_2_threads(const std::string& file, const std::string& input, const Shape& shape) {
  const char* cache = std::getenv("REDUCE_MODEL_CACHE");
  ASSERT_NE(cache, nullptr) << "REDUCE_MODEL_CACHE must be set (CTest sets it)";
  auto model = load_model(fs::path(cache) / file);
  ASSERT_TRUE(model.ok()) << model.error().message();
  ASSERT_TRUE(set_input_shape(*model, input, shape).ok());
  auto inputs = make_random_inputs(model->graph, {});
  ASSERT_TRUE(inputs.ok());
  TensorMap feed;
  for (auto& t : *inputs) feed[t.name] = t.tensor;
  const TensorMap one = run_with_threads(*model, feed, 1), two = run_with_threads(*model, feed, 2);
  ASSERT_EQ(one.size(), model->graph.outputs.size());
  ASSERT_EQ(two.size(), one.size());
  for (const auto& [name, t] : one) EXPECT_TRUE(t.equals(two.at(name))) << file << " output '" << name << "'";
}

TEST(Determinism, PpocrRecIsBitIdenticalWithOneAndTwoThreads) {
  expect_same_for_1_and_2_threads("ppocr_rec.onnx", "x", {1, 3, 48, 320});
}

TEST(Determinism, PpocrDetIsBitIdenticalWithOneAndTwoThreads) {
  expect_same_for_1_and_2_threads("ppocr_det.onnx", "x", {1, 3, 128, 128});
}

}  // namespace
}  // namespace reduce
