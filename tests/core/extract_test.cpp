// Subgraph extraction on small text models: cut values, outputs, optional inputs, weights, subgraphs.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/extract.h"
#include "core/graph_index.h"
#include "core/model_io.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;
using testing::TempDir;

// X ─ Relu(a) ─┬─ Neg(b) ─┐
//              └─ Abs(c) ─┴─ Add(d) ─ Split(s1,s2) ─ Mul(s1, w) = Y ; s2 = Z (graph output)
// Clip reads an optional input left empty; w is shared by two nodes.
const char* kBranchy = R"(
<ir_version: 8, opset_import: ["" : 15]>
branchy (float[2, 4] X, float hi) => (float[2, 2] Y, float[2, 2] Z, float[2, 4] C)
<float[2] w = {2.0, 3.0}>
{
  a = Relu(X)
  b = Neg(a)
  c = Abs(a)
  d = Add(b, c)
  s1, s2 = Split <axis = 1> (d)
  Y = Mul(s1, w)
  Z = Mul(s2, w)
  C = Clip(d, , hi)
}
)";

std::vector<std::string> names(const std::vector<ValueInfo>& vis) {
  std::vector<std::string> out;
  for (const auto& vi : vis) out.push_back(vi.name);
  return out;
}

struct Fixture {
  Model model = parse_model(kBranchy);
  Extractor extractor = Extractor::create(model).value();
  Model extract(std::vector<size_t> nodes, const ExtractOptions& opts = {}) {
    auto m = extractor.extract(nodes, opts);
    if (!m) ADD_FAILURE() << m.error().message();
    return m.ok() ? std::move(m).value() : Model{};
  }
};

TEST(Extract, WholeModelKeepsInputsAndOutputsInOrder) {
  Fixture f;
  Model m = f.extract({0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(names(m.graph.inputs), (std::vector<std::string>{"X", "hi"}));
  EXPECT_EQ(names(m.graph.outputs), (std::vector<std::string>{"Y", "Z", "C"}));
  EXPECT_TRUE(check_model(m).ok());
}

TEST(Extract, CutValuesBecomeTypedAndShapedInputs) {
  Fixture f;
  Model m = f.extract({3});  // Add(b, c)
  EXPECT_EQ(names(m.graph.inputs), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(names(m.graph.outputs), (std::vector<std::string>{"d"}));
  for (const auto& vi : m.graph.inputs) EXPECT_EQ(vi.type.to_string(), "float[2,4]");
  EXPECT_EQ(m.graph.outputs[0].type.to_string(), "float[2,4]");
  EXPECT_TRUE(check_model(m).ok()) << check_model(m).error().message();
}

TEST(Extract, BranchOutputsThatLeaveTheKeptSetBecomeOutputs) {
  Fixture f;
  // Relu, Neg, Abs: `a` is read inside the kept set, `b` and `c` leave it.
  Model m = f.extract({0, 1, 2});
  EXPECT_EQ(names(m.graph.inputs), (std::vector<std::string>{"X"}));
  EXPECT_EQ(names(m.graph.outputs), (std::vector<std::string>{"b", "c"}));
}

TEST(Extract, MultiOutputNodeExposesEachUnreadOutput) {
  Fixture f;
  Model m = f.extract({4, 5});  // Split and the Mul of s1: s2 leaves, Y is an original output
  EXPECT_EQ(names(m.graph.outputs), (std::vector<std::string>{"Y", "s2"}));
  EXPECT_EQ(m.graph.find_value_info("s2")->type.to_string(), "float[2,2]");
  EXPECT_TRUE(check_model(m).ok());
}

TEST(Extract, SharedInitializersAreSharedNotCopied) {
  Fixture f;
  Model m = f.extract({5, 6});
  ASSERT_EQ(m.graph.initializers.size(), 1u);
  EXPECT_TRUE(m.graph.initializers[0].tensor.shares_storage_with(f.model.graph.find_initializer("w")->tensor));
  EXPECT_EQ(names(m.graph.inputs), (std::vector<std::string>{"s1", "s2"}));
}

TEST(Extract, OptionalInputsStayEmpty) {
  Fixture f;
  Model m = f.extract({7});
  ASSERT_EQ(m.graph.nodes.size(), 1u);
  EXPECT_EQ(m.graph.nodes[0].inputs, (std::vector<std::string>{"d", "", "hi"}));
  EXPECT_EQ(names(m.graph.inputs), (std::vector<std::string>{"hi", "d"}));
  EXPECT_TRUE(check_model(m).ok());
}

TEST(Extract, FrozenCutValuesBecomeInitializers) {
  Fixture f;
  ExtractOptions opts;
  opts.frozen.emplace("c", Tensor::allocate(DType::Float, {2, 4}).value());
  Model m = f.extract({3}, opts);
  EXPECT_EQ(names(m.graph.inputs), (std::vector<std::string>{"b"}));
  ASSERT_NE(m.graph.find_initializer("c"), nullptr);
  EXPECT_TRUE(check_model(m).ok());
}

TEST(Extract, RequestedOutputsReplaceTheDefault) {
  Fixture f;
  ExtractOptions opts;
  opts.outputs = {"b", "c"};
  Model m = f.extract({0, 1, 2, 3}, opts);
  EXPECT_EQ(names(m.graph.outputs), (std::vector<std::string>{"b", "c"}));
  opts.outputs = {"Y"};
  auto bad = f.extractor.extract(std::vector<size_t>{0, 1}, opts);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().what.find("'Y'"), std::string::npos);
}

TEST(Extract, NodesComeOutInTopologicalOrderWhateverTheRequestOrder) {
  Fixture f;
  Model m = f.extract({3, 1, 0, 2, 1});
  std::vector<std::string> ops;
  for (const auto& n : m.graph.nodes) ops.push_back(n.op_type);
  EXPECT_EQ(ops, (std::vector<std::string>{"Relu", "Neg", "Abs", "Add"}));
}

TEST(Extract, BadRequestsAreErrors) {
  Fixture f;
  EXPECT_FALSE(f.extractor.extract(std::vector<size_t>{}).ok());
  EXPECT_FALSE(f.extractor.extract(std::vector<size_t>{99}).ok());
}

// ONNX's inference (the Debian library) predates opset 23: its ops' outputs get their type from
// the op's definition, and values after them are inferred from there.
TEST(Extract, ValuesAfterOpset23AttentionAndRMSNormalizationAreTyped) {
  Model model = parse_model(R"(
<ir_version: 10, opset_import: ["" : 23]>
g (float[1, 4, 8] Q, float[1, 4, 8] K, float[1, 4, 6] V, float[12] S) => (float[1, 4, 12] Y)
{
  a = Attention <q_num_heads = 4, kv_num_heads = 2> (Q, K, V)
  r = Relu(a)
  Y = RMSNormalization (r, S)
}
)");
  Extractor extractor = Extractor::create(model).value();
  auto relu = extractor.extract(std::vector<size_t>{1});
  ASSERT_TRUE(relu.ok()) << relu.error().message();
  EXPECT_EQ(relu->graph.inputs.at(0).type.to_string(), "float[1,4,12]");
  EXPECT_EQ(relu->graph.outputs.at(0).type.to_string(), "float[1,4,12]");
  auto attention = extractor.extract(std::vector<size_t>{0});
  ASSERT_TRUE(attention.ok()) << attention.error().message();
  EXPECT_EQ(attention->graph.outputs.at(0).type.to_string(), "float[1,4,12]");
}

TEST(Extract, SubgraphReadsOfOuterValuesBecomeInputs) {
  Model model = parse_model(R"(
<ir_version: 8, opset_import: ["" : 16]>
g (bool c, float[2] X) => (float[2] Y)
{
  z = Relu(X)
  Y = If (c) <
    then_branch = t () => (float[2] a) { a = Add(X, z) },
    else_branch = e () => (float[2] b) { b = Neg(z) }
  >
}
)");
  auto ex = Extractor::create(model);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  auto m = ex->extract(std::vector<size_t>{1});
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(names(m->graph.inputs), (std::vector<std::string>{"c", "X", "z"}));
  EXPECT_TRUE(check_model(*m).ok()) << check_model(*m).error().message();
}

// The boundary rule (subgraph_boundary): what the reducer asks without extracting.
struct BoundaryFixture {
  Model model = parse_model(kBranchy);
  GraphIndex index = GraphIndex::build(model.graph).value();
  InitializerIndex initializers = index_initializers(model.graph);
  SubgraphBoundary of(std::vector<size_t> nodes, std::vector<std::string> outputs = {}) const {
    return subgraph_boundary(index, initializers, nodes, outputs);
  }
};

std::vector<std::string> read_names(const SubgraphBoundary& b, BoundarySource source) {
  std::vector<std::string> out;
  for (const auto& r : b.reads)
    if (r.source == source) out.push_back(r.name);
  return out;
}

TEST(Boundary, CutValuesAreReadsThatRemovedNodesProduce) {
  BoundaryFixture f;
  const auto b = f.of({3, 4});  // Add(b, c), Split(d)
  EXPECT_EQ(b.cut_values(), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(b.inputs(), (std::vector<std::string>{"b", "c"}));
  EXPECT_TRUE(read_names(b, BoundarySource::GraphInput).empty());
}

TEST(Boundary, InputsAreInFirstUseOrderOriginalInputsIncluded) {
  BoundaryFixture f;
  const auto b = f.of({7});  // Clip(d, , hi): the cut value is read first
  EXPECT_EQ(b.inputs(), (std::vector<std::string>{"d", "hi"}));
  EXPECT_EQ(b.cut_values(), (std::vector<std::string>{"d"}));
  EXPECT_EQ(read_names(b, BoundarySource::GraphInput), (std::vector<std::string>{"hi"}));
}

TEST(Boundary, OmittedOptionalInputsAreNotRead) {
  BoundaryFixture f;
  for (const auto& r : f.of({7}).reads) EXPECT_FALSE(r.name.empty());
  EXPECT_EQ(f.of({7}).reads.size(), 2u);
}

TEST(Boundary, InitializersAreReadButAreNotInputs) {
  BoundaryFixture f;
  const auto b = f.of({5, 6});  // Mul(s1, w), Mul(s2, w)
  EXPECT_EQ(read_names(b, BoundarySource::Initializer), (std::vector<std::string>{"w"}));
  EXPECT_EQ(b.inputs(), (std::vector<std::string>{"s1", "s2"}));
}

TEST(Boundary, DefaultOutputsAreOriginalOutputsThenValuesThatLeave) {
  BoundaryFixture f;
  EXPECT_EQ(f.of({4, 5}).outputs, (std::vector<std::string>{"Y", "s2"}));
  EXPECT_EQ(f.of({0, 1, 2}).outputs, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(f.of({0, 1, 2, 3, 4, 5, 6, 7}).outputs, (std::vector<std::string>{"Y", "Z", "C"}));
}

TEST(Boundary, ExplicitOutputsReplaceTheDefaults) {
  BoundaryFixture f;
  EXPECT_EQ(f.of({0, 1, 2, 3}, {"c", "b"}).outputs, (std::vector<std::string>{"c", "b"}));
}

// A value nothing reads (a Dropout mask) is an output only of a node with nothing else to offer.
TEST(Boundary, UnreadValuesAreOutputsOnlyOfNodesWithNothingElseToOffer) {
  Model model = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2] X) => (float[2] Y)
{
  a = Relu(X)
  y, mask = Dropout(a)
  Y = Abs(y)
  dead = Neg(a)
}
)");
  const GraphIndex index = GraphIndex::build(model.graph).value();
  const InitializerIndex initializers = index_initializers(model.graph);
  auto outputs = [&](std::vector<size_t> nodes) { return subgraph_boundary(index, initializers, nodes).outputs; };
  // Dropout offers `y`, which Abs (left out) reads: its mask is left out.
  EXPECT_EQ(outputs({0, 1}), (std::vector<std::string>{"y"}));
  // Neg's output is all it has; with Abs kept, Dropout has nothing else to offer either.
  EXPECT_EQ(outputs({0, 1, 2, 3}), (std::vector<std::string>{"Y", "mask", "dead"}));
}

TEST(Boundary, NodesComeInTopologicalOrderWithoutDuplicates) {
  BoundaryFixture f;
  EXPECT_EQ(f.of({3, 1, 0, 2, 1}).nodes, (std::vector<size_t>{0, 1, 2, 3}));
}

// Every non-empty subgraph of kBranchy: the extracted model's inputs and outputs are the boundary's.
TEST(Boundary, ExtractedModelsHaveTheBoundarysInputsAndOutputs) {
  Fixture e;
  BoundaryFixture f;
  for (unsigned mask = 1; mask < 256; ++mask) {
    std::vector<size_t> nodes;
    for (size_t i = 0; i < 8; ++i)
      if (mask & (1u << i)) nodes.push_back(i);
    const auto b = f.of(nodes);
    Model m = e.extract(nodes);
    auto inputs = names(m.graph.inputs), expected = b.inputs();
    std::sort(inputs.begin(), inputs.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(inputs, expected) << "mask " << mask;
    EXPECT_EQ(names(m.graph.outputs), b.outputs) << "mask " << mask;
  }
}

TEST(Extract, CandidateSavedAgainstSharedWeightsIsSmallAndLoads) {
  TempDir dir;
  Model model = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[1, 8192] X, float[8192] w) => (float[1, 8192] Y)
{
  a = Mul(X, w)
  b = Relu(a)
  Y = Add(b, w)
}
)");
  // The text syntax cannot hold 32 KB of weights: turn the input `w` into an initializer.
  model.graph.inputs.pop_back();
  model.graph.initializers.push_back({"w", Tensor::allocate(DType::Float, {8192}).value(), {}});
  auto ex = Extractor::create(model);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  auto table = write_shared_weights(model, dir / "weights.bin");
  ASSERT_TRUE(table.ok());
  auto cand = ex->extract(std::vector<size_t>{2});
  ASSERT_TRUE(cand.ok());
  SaveOptions opts;
  opts.shared = &*table;
  ASSERT_TRUE(save_model(*cand, dir / "cand.onnx", opts).ok());
  EXPECT_LT(std::filesystem::file_size(dir / "cand.onnx"), 512u);
  EXPECT_TRUE(check_model_file(dir / "cand.onnx").ok());
  auto back = load_model(dir / "cand.onnx");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(first_difference(*cand, *back), std::nullopt);
}

}  // namespace
}  // namespace reduce

namespace reduce {
namespace {

// ONNX 1.12 knows opset 17: at opset 18 and later its registry hands out older schemas (ReduceMean-13
// reads `axes` from an attribute, Split-13 has no `num_outputs`), whose inference would type the
// values wrongly. Ops changed after the library are typed by our own rules, or left untyped.
TEST(ShapeInference, OpsNewerThanTheOnnxLibraryAreNotTypedByOlderSchemas) {
  const Model m = testing::parse_model(R"(
<ir_version: 10, opset_import: ["" : 18]>
g (float[1, 4, 5, 6] x) => (float[1, 4, 1, 1] y, float[1, 2, 5, 6] s1) {
  axes = Constant <value = int64[2] {2, 3}> ()
  r = ReduceMean <keepdims = 1> (x, axes)
  y = Relu(r)
  s1, s2 = Split <axis = 1, num_outputs = 2> (x)
}
)");
  auto types = infer_value_types(m);
  ASSERT_TRUE(types.ok()) << types.error().message();
  auto shape_of = [&](const std::string& v) {
    auto it = types->find(v);
    if (it == types->end() || !it->second.has_shape) return std::string("?");
    std::string s;
    for (const Dim& d : it->second.dims) s += (d.is_static() ? std::to_string(d.value) : std::string("?")) + ",";
    return s;
  };
  const std::string r = shape_of("r");
  EXPECT_TRUE(r == "1,4,1,1," || r == "?" || r == "?,?,?,?,") << r;
  const std::string s2 = shape_of("s2");
  EXPECT_TRUE(s2 == "1,2,5,6," || s2 == "?" || s2 == "?,?,?,?,") << s2;
}

}  // namespace
}  // namespace reduce
