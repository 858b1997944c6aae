// The failing-model corpus: deterministic generation, a well-formed manifest with the fault table's
// ground truth, valid models that run on the reference, and triggers that hold in recorded values.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "bodies.h"
#include "core/extract.h"
#include "core/model_io.h"
#include "core/validate.h"
#include "corpus_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using corpus::Family;
using corpus::GeneratedModel;
using testing::TempDir;

std::vector<const Family*> all_families() {
  std::vector<const Family*> out;
  for (const auto& f : corpus::families()) out.push_back(&f);
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

TEST(Corpus, HasEveryFamilyOfTheGroundTruthTable) {
  std::set<std::string> faults;
  for (const auto& f : corpus::families()) faults.insert(std::string(f.fault));
  std::set<std::string> expected;
  for (const auto& [fault, ops] : testing::kMinimalOps) expected.insert(fault);
  EXPECT_EQ(faults, expected);
}

TEST(Corpus, SameSeedWritesByteIdenticalFiles) {
  TempDir a, b;
  const auto families = all_families();
  const std::vector<size_t> sizes{10, 100};
  ASSERT_TRUE(corpus::write_corpus(a.path(), families, sizes, 7).ok());
  ASSERT_TRUE(corpus::write_corpus(b.path(), families, sizes, 7).ok());
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(a.path())) {
    const auto name = entry.path().filename();
    EXPECT_EQ(testing::read_bytes(entry.path()), testing::read_bytes(b / name.string())) << name;
    ++files;
  }
  EXPECT_EQ(files, families.size() * sizes.size() + 1);
}

TEST(Corpus, AnotherSeedGivesOtherWeights) {
  auto a = corpus::generate(testing::family("conv-bn-fold-eps"), 100, 1);
  auto b = corpus::generate(testing::family("conv-bn-fold-eps"), 100, 2);
  EXPECT_NE(serialize_model(a.model).value(), serialize_model(b.model).value());
}

TEST(Corpus, ManifestHasOneWellFormedLinePerModel) {
  TempDir dir;
  ASSERT_TRUE(corpus::write_corpus(dir.path(), all_families(), std::vector<size_t>{10, 100}, 1).ok());
  std::istringstream manifest(testing::read_bytes(dir / "manifest.tsv"));
  std::string line;
  ASSERT_TRUE(std::getline(manifest, line));
  EXPECT_EQ(line, "model\tengine\tkind\tminimal_ops\tnodes\tdescription");
  size_t lines = 0;
  while (std::getline(manifest, line)) {
    ++lines;
    const auto cols = split(line, '\t');
    ASSERT_EQ(cols.size(), 6u) << line;
    SCOPED_TRACE(cols[0]);
    const Family* family = nullptr;
    for (const auto& f : corpus::families())
      if (cols[0].starts_with(std::string(f.stem) + "_")) family = &f;
    ASSERT_NE(family, nullptr);
    EXPECT_EQ(cols[1], family->engine);
    EXPECT_TRUE(cols[1] == "opt" || cols[1].starts_with("opt:"));
    EXPECT_TRUE(cols[2] == "mismatch" || cols[2] == "nonfinite" || cols[2] == "error");
    EXPECT_EQ(cols[3], testing::kMinimalOps.at(std::string(family->fault)));
    auto model = load_model(dir / cols[0]);  // loading runs the ONNX checker
    ASSERT_TRUE(model.ok()) << model.error().message();
    EXPECT_EQ(cols[4], std::to_string(count_nodes(model->graph)));
    EXPECT_FALSE(cols[5].empty());
  }
  EXPECT_EQ(lines, corpus::families().size() * 2);
}

TEST(Corpus, SizesHitTheirTargetsWithTheTriggerInTheMiddle) {
  for (const auto& f : corpus::families()) {
    for (size_t size : {10, 100, 1000, 10000}) {
      SCOPED_TRACE(std::string(f.stem) + " " + std::to_string(size));
      auto g = corpus::generate(f, size, 1);
      // The smallest triggers need up to 12 nodes on their own, the export-shaped families their fixed
      // parts (embeddings, stem, UNet levels: the family's smallest model, size 1); other sizes are exact.
      const size_t smallest = std::max<size_t>(12, corpus::generate(f, 1, 1).nodes);
      EXPECT_LE(smallest, 30u) << "a family's fixed parts stay small";
      if (size == 10) EXPECT_TRUE(g.nodes >= 10 && g.nodes <= smallest) << g.nodes;
      else EXPECT_EQ(g.nodes, size);
      EXPECT_EQ(g.minimal_ops(), testing::kMinimalOps.at(std::string(f.fault)));
      if (size >= 100) {
        const double where = static_cast<double>(g.minimal_nodes.front()) / static_cast<double>(g.nodes);
        EXPECT_GT(where, 0.3);
        EXPECT_LT(where, 0.7);
      }
    }
  }
}

// The ONNX library of the build (Debian's 1.12) knows opsets up to 17 and IR version 8: its checker
// refuses newer models (the opset-23 family) whatever they hold. Those pass our own validation.
constexpr int64_t kCheckerOpset = 17;

TEST(Corpus, EveryModelPassesTheOnnxChecker) {
  for (const auto& f : corpus::families())
    for (size_t size : {10, 100, 1000, 10000}) {
      auto g = corpus::generate(f, size, 1);
      const bool newer = g.model.opset("").value_or(0) > kCheckerOpset;
      auto status = newer ? validate_model(g.model) : check_model(g.model);
      EXPECT_TRUE(status.ok()) << g.file_name << ": " << (status.ok() ? "" : status.error().message());
    }
}

TEST(Corpus, EveryModelRunsOnTheReferenceWithFiniteBoundedOutputs) {
  auto engine = make_reference_engine();
  for (const auto& f : corpus::families())
    for (size_t size : {10, 100, 1000, 10000}) {
      auto g = corpus::generate(f, size, 1);
      SCOPED_TRACE(g.file_name);
      auto prepared = engine->prepare(g.model);
      ASSERT_TRUE(prepared.ok()) << prepared.error().message();
      auto out = (*prepared)->run(testing::seeded_inputs(g.model));
      ASSERT_TRUE(out.ok()) << out.error().message();
      const auto& main_output = out->at(g.model.graph.outputs[0].name);
      EXPECT_TRUE(testing::all_finite(main_output));
      EXPECT_LT(testing::max_abs(main_output), 20.0f);
      for (const auto& [name, t] : *out) EXPECT_TRUE(testing::all_finite(t)) << name;
    }
}

// --- Each trigger's condition holds in the values the reference records ---

struct Recorded {
  GeneratedModel g;
  TensorMap values;
  const Node& minimal(size_t k) const { return g.model.graph.nodes[g.minimal_nodes[k]]; }
  const Tensor& value(const std::string& name) const { return values.at(name); }
};

Recorded record(std::string_view fault, size_t size = 100) {
  Recorded r{corpus::generate(testing::family(fault), size, 1), {}};
  r.values = testing::record_reference(r.g.model, testing::seeded_inputs(r.g.model));
  return r;
}

TEST(CorpusTriggers, AttentionLogitsExceed88InEveryRowOfTheTriggerOnly) {
  auto r = record("attention-unstable-softmax");
  size_t softmaxes = 0;
  for (const auto& n : r.g.model.graph.nodes) {
    if (n.op_type != "Softmax") continue;
    ++softmaxes;
    const bool trigger = &n == &r.minimal(2);
    const Tensor& logits = r.value(n.inputs[0]);
    auto v = logits.data<float>();
    const float lowest = *std::min_element(v.begin(), v.end());
    const float highest = *std::max_element(v.begin(), v.end());
    if (trigger) {
      EXPECT_GT(lowest, 100.0f);
    } else {
      EXPECT_LT(highest, 20.0f) << n.name;
    }
  }
  EXPECT_GT(softmaxes, 1u);
}

TEST(CorpusTriggers, LayerNormVarianceIsZeroInOneRowOfTheTriggerOnly) {
  auto r = record("layernorm-drop-eps");
  // Second ReduceMean of each LayerNorm: the variance, read by the Add eps.
  size_t zero_rows = 0, norms = 0;
  for (const auto& n : r.g.model.graph.nodes) {
    if (n.op_type != "Sqrt") continue;
    ++norms;
    const Node* add = nullptr;
    for (const auto& m : r.g.model.graph.nodes)
      if (m.outputs[0] == n.inputs[0]) add = &m;
    ASSERT_NE(add, nullptr);
    for (float v : r.value(add->inputs[0]).data<float>()) zero_rows += v == 0.0f;
  }
  EXPECT_EQ(zero_rows, 1u);
  EXPECT_GT(norms, 1u);
  EXPECT_EQ(r.value(r.minimal(3).outputs[0]).data<float>().size(), static_cast<size_t>(corpus::kTokens));
}

TEST(CorpusTriggers, ConvBnVariancesAreBelowEpsAndTheConvFeedsOnlyTheBn) {
  auto r = record("conv-bn-fold-eps");
  const Node& conv = r.minimal(0);
  const Node& bn = r.minimal(1);
  ASSERT_EQ(conv.op_type, "Conv");
  ASSERT_EQ(bn.op_type, "BatchNormalization");
  size_t readers = 0;
  for (const auto& n : r.g.model.graph.nodes)
    readers += std::count(n.inputs.begin(), n.inputs.end(), conv.outputs[0]);
  EXPECT_EQ(readers, 1u);
  EXPECT_EQ(bn.inputs[0], conv.outputs[0]);
  const float eps = bn.attribute("epsilon")->f;
  for (float var : r.g.model.graph.find_initializer(bn.inputs[4])->tensor.data<float>()) EXPECT_LT(var, eps / 5);
  size_t bns = 0;
  for (const auto& n : r.g.model.graph.nodes) bns += n.op_type == "BatchNormalization";
  EXPECT_EQ(bns, 1u);
}

TEST(CorpusTriggers, BroadcastMulIsTheOnlyRank4ChannelBroadcastAtBatch1) {
  auto r = record("broadcast-batch1");
  size_t triggers = 0;
  for (size_t i = 0; i < r.g.model.graph.nodes.size(); ++i) {
    const Node& n = r.g.model.graph.nodes[i];
    if (n.op_type != "Add" && n.op_type != "Sub" && n.op_type != "Mul" && n.op_type != "Div") continue;
    auto shape_of = [&](const std::string& v) {
      if (auto it = r.values.find(v); it != r.values.end()) return it->second.shape();
      if (auto* init = r.g.model.graph.find_initializer(v)) return init->tensor.shape();
      return r.g.model.graph.find_value_info(v)->type.dims.size() == 4 ? Shape{1, 8, 8, 8} : Shape{};
    };
    const Shape a = shape_of(n.inputs[0]), b = shape_of(n.inputs[1]), out = r.value(n.outputs[0]).shape();
    const bool fires = a.size() == 4 && b.size() == 4 && out[0] == 1 && out[1] > 1 && (a[1] == 1 || b[1] == 1);
    if (fires) {
      ++triggers;
      EXPECT_EQ(i, r.g.minimal_nodes[0]);
    }
  }
  EXPECT_EQ(triggers, 1u);
}

TEST(CorpusTriggers, CastToFloatAndResizeAppearOnceEach) {
  auto cast = corpus::generate(testing::family("cast-fp16-conflict"), 1000, 1);
  size_t casts = 0;
  for (const auto& n : cast.model.graph.nodes) casts += n.op_type == "Cast";
  EXPECT_EQ(casts, 1u);
  EXPECT_EQ(cast.model.graph.nodes[cast.minimal_nodes[0]].attribute("to")->i, static_cast<int64_t>(DType::Float));

  auto resize = corpus::generate(testing::family("resize-half-pixel"), 1000, 1);
  size_t resizes = 0;
  for (const auto& n : resize.model.graph.nodes) resizes += n.op_type == "Resize";
  EXPECT_EQ(resizes, 1u);
  const Node& r = resize.model.graph.nodes[resize.minimal_nodes[0]];
  EXPECT_EQ(r.attribute("mode")->s, "linear");
  EXPECT_EQ(r.attribute("coordinate_transformation_mode")->s, "half_pixel");
}

TEST(CorpusTriggers, InputBindingSubReadsBothInputsAndEveryOtherTwoActivationNodeIsCommutative) {
  auto g = corpus::generate(testing::family("input-binding-order"), 1000, 1);
  const auto& inputs = g.model.graph.inputs;
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_GT(inputs[0].name, inputs[1].name);  // declared out of alphabetical order
  EXPECT_EQ(inputs[0].type, inputs[1].type);
  const Node& sub = g.model.graph.nodes[g.minimal_nodes[0]];
  EXPECT_EQ(sub.inputs, (std::vector<std::string>{inputs[0].name, inputs[1].name}));
  for (const auto& n : g.model.graph.nodes) {
    if (&n == &sub) continue;
    size_t activations = 0;
    for (const auto& v : n.inputs) activations += !v.empty() && !g.model.graph.find_initializer(v);
    if (activations >= 2) {
      EXPECT_EQ(n.op_type, "Add") << n.name;
    }
  }
}

TEST(CorpusTriggers, Fp16OverflowOnlyAtTheEnergySumWhichNothingReads) {
  auto r = record("fp16-overflow");
  const Node& sum = r.minimal(0);
  constexpr float kHalfMax = 65504.0f;
  EXPECT_GT(testing::max_abs(r.value(sum.outputs[0])), 1.5f * kHalfMax);
  for (float v : r.value(sum.outputs[0]).data<float>()) EXPECT_GT(v, 1.5f * kHalfMax);
  for (const auto& n : r.g.model.graph.nodes) {
    if (&n == &sum) continue;
    EXPECT_LT(testing::max_abs(r.value(n.outputs[0])), kHalfMax / 4) << n.name;
    EXPECT_EQ(std::count(n.inputs.begin(), n.inputs.end(), sum.outputs[0]), 0) << n.name;
  }
}

TEST(CorpusExamples, CommittedExamplesEqualAFreshGeneration) {
  const std::filesystem::path examples = std::filesystem::path(REDUCE_SOURCE_DIR) / "corpus/examples";
  std::istringstream manifest(testing::read_bytes(examples / "manifest.tsv"));
  std::string line;
  std::getline(manifest, line);
  size_t models = 0;
  std::string fresh_manifest = corpus::manifest_header();
  TempDir fresh;
  while (std::getline(manifest, line)) {
    const auto cols = split(line, '\t');
    ASSERT_EQ(cols.size(), 6u);
    const Family* family = nullptr;
    for (const auto& f : corpus::families())
      if (cols[0].starts_with(std::string(f.stem) + "_")) family = &f;
    ASSERT_NE(family, nullptr) << cols[0];
    const std::string size = cols[0].substr(family->stem.size() + 1, cols[0].size() - family->stem.size() - 6);
    auto g = corpus::generate(*family, std::stoul(size), corpus::kDefaultSeed);
    ASSERT_TRUE(save_model(g.model, fresh / cols[0]).ok());
    EXPECT_EQ(testing::read_bytes(fresh / cols[0]), testing::read_bytes(examples / cols[0])) << cols[0];
    fresh_manifest += corpus::manifest_line(g);
    ++models;
  }
  EXPECT_GE(models, 2u);
  EXPECT_EQ(fresh_manifest, testing::read_bytes(examples / "manifest.tsv"));
}

}  // namespace
}  // namespace reduce
