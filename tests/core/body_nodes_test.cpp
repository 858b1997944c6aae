// Body nodes (core/body_nodes.h): numbered depth first, and removed from a kept If/Loop's bodies by
// the extractor with the documented semantics: a dead node just goes, a read value is replaced by an
// input of the same type (a chain is bypassed) or by zeros of its static shape, else the edit is
// refused; nested bodies go with their node; the result passes the ONNX checker and runs.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/body_nodes.h"
#include "core/extract.h"
#include "core/model_io.h"
#include "engine/engine.h"
#include "engine/optimized_support.h"
#include "test_support.h"

namespace reduce {
namespace {

constexpr const char* kModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x, bool c) => (float[2, 4] y, float[4] w)
{
  y, w = If (c) <
    then_branch = t () => (float[2, 4] a, float[4] r) {
      a1 = Relu(x)
      a2 = Neg(a1)
      a = Sigmoid(a2)
      one = Constant <value = int64[1] {0}> ()
      r = ReduceSum <keepdims = 0> (a, one)
      dead = Sin(x)
    },
    else_branch = e () => (float[2, 4] b, float[4] q) {
      b = If (c) <
        then_branch = tt () => (float[2, 4] p) { p = Abs(x) },
        else_branch = te () => (float[2, 4] p2) { p2 = Cos(x) }
      >
      q = ReduceMax <keepdims = 0, axes = [0]> (b)
    }
  >
}
)";

// Ids in numbering order (a Constant is imported as a weight of its body): then 0..4 (Relu Neg
// Sigmoid ReduceSum Sin), else: If (5) with its branches' Abs (6) and Cos (7), ReduceMax (8).
TEST(BodyNodes, AreNumberedDepthFirstWithEachNodesBodiesAfterIt) {
  const Model m = testing::parse_model(kModel);
  const BodyNodes numbering(m.graph);
  ASSERT_EQ(numbering.size(), 9u);
  EXPECT_EQ(numbering.range_of(0), std::make_pair(size_t{0}, size_t{9}));
  EXPECT_EQ(numbering.node(2).op_type, "Sigmoid");
  EXPECT_EQ(numbering.node(5).op_type, "If");
  EXPECT_EQ(numbering[5].end, 8u);  // its branches' two nodes are under it
  EXPECT_EQ(numbering.node(6).op_type, "Abs");
  EXPECT_EQ(numbering.node(8).op_type, "ReduceMax");
}

Expected<Model> extract_without(const Model& m, std::vector<size_t> removed) {
  auto extractor = Extractor::create(m);
  if (!extractor) return extractor.error();
  ExtractOptions options;
  options.removed_body_nodes = std::move(removed);
  std::vector<size_t> all(m.graph.nodes.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return extractor->extract(all, options);
}

const Graph& branch(const Model& m, const char* name) { return *m.graph.nodes.at(0).attribute(name)->g; }

TensorMap run(const Model& m) {
  auto prepared = make_reference_engine()->prepare(m);
  EXPECT_TRUE(prepared.ok()) << prepared.error().message();
  if (!prepared.ok()) return {};
  Tensor c = *Tensor::allocate(DType::Bool, {});
  c.mutable_data<uint8_t>()[0] = 1;
  auto out = (*prepared)->run({{"x", testing::floats({2, 4}, {1, -2, 3, -4, 5, -6, 7, -8})}, {"c", c}});
  EXPECT_TRUE(out.ok()) << out.error().message();
  return out.ok() ? *out : TensorMap{};
}

TEST(BodyNodes, ADeadNodeGoesAndAChainOfShapeKeepingNodesIsBypassed) {
  const Model m = testing::parse_model(kModel);
  // Sin is dead; Relu and Neg keep the shape: Sigmoid reads x.
  auto edited = extract_without(m, {0, 1, 4});
  ASSERT_TRUE(edited.ok()) << edited.error().message();
  const Graph& t = branch(*edited, "then_branch");
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_EQ(t.nodes[0].op_type, "Sigmoid");
  EXPECT_EQ(t.nodes[0].inputs, std::vector<std::string>{"x"});
  EXPECT_TRUE(check_model(*edited).ok()) << check_model(*edited).error().message();
  const auto y = testing::values(run(*edited).at("y"));
  EXPECT_NEAR(y[1], 1.0 / (1.0 + std::exp(2.0)), 1e-6);  // sigmoid(x), x = -2
}

TEST(BodyNodes, AnOutputWithoutAnInputOfItsTypeBecomesZerosAndNestedBodiesGoWithTheirNode) {
  const Model m = testing::parse_model(kModel);
  // ReduceSum (float[4] from float[2,4]) has no input of its type: r becomes zeros, and the weight
  // only it read goes. The nested If goes with its branches; its b (its one input is its bool
  // condition) becomes zeros too, which ReduceMax then reads.
  auto edited = extract_without(m, {3, 5});
  ASSERT_TRUE(edited.ok()) << edited.error().message();
  EXPECT_EQ(branch(*edited, "then_branch").initializers.size(), 1u);
  const Graph& e = branch(*edited, "else_branch");
  ASSERT_EQ(e.nodes.size(), 2u);  // b, now a weight, is returned through an Identity
  EXPECT_EQ(e.nodes[0].op_type, "ReduceMax");
  EXPECT_EQ(e.nodes[0].inputs[0], "b");
  EXPECT_EQ(e.nodes[1].op_type, "Identity");
  EXPECT_EQ(e.nodes[1].inputs[0], "b");
  ASSERT_EQ(e.initializers.size(), 1u);
  EXPECT_EQ(e.initializers[0].name, "b");
  EXPECT_TRUE(check_model(*edited).ok()) << check_model(*edited).error().message();
  EXPECT_EQ(testing::values(run(*edited).at("w")), (std::vector<float>{0, 0, 0, 0}));
}

// A branch left returning an outer value (x) directly gets an Identity (issue 66): ONNX Runtime
// refuses "an outer scope value being returned directly". At any depth; the values are unchanged.
TEST(BodyNodes, ABranchLeftReturningAnOuterValueReturnsItThroughAnIdentity) {
  const Model m = testing::parse_model(kModel);
  // Relu, Neg and Sigmoid go: a is x. The nested then-branch's Abs goes: p is x.
  auto edited = extract_without(m, {0, 1, 2, 6});
  ASSERT_TRUE(edited.ok()) << edited.error().message();
  const Graph& t = branch(*edited, "then_branch");
  const auto made_in = [](const Graph& g, const std::string& name) {
    return std::any_of(g.nodes.begin(), g.nodes.end(), [&](const Node& n) {
      return std::find(n.outputs.begin(), n.outputs.end(), name) != n.outputs.end();
    });
  };
  for (const auto& out : t.outputs) EXPECT_TRUE(made_in(t, out.name)) << out.name;
  ASSERT_EQ(t.outputs[0].name, "x_returned");
  const Graph& nested = *branch(*edited, "else_branch").nodes.at(0).attribute("then_branch")->g;
  ASSERT_EQ(nested.nodes.size(), 1u);
  EXPECT_EQ(nested.nodes[0].op_type, "Identity");
  EXPECT_EQ(nested.nodes[0].inputs, std::vector<std::string>{"x"});
  EXPECT_TRUE(made_in(nested, nested.outputs[0].name));
  EXPECT_TRUE(check_model(*edited).ok()) << check_model(*edited).error().message();
  EXPECT_EQ(testing::values(run(*edited).at("y")), (std::vector<float>{1, -2, 3, -4, 5, -6, 7, -8}));
}

TEST(BodyNodes, AValueNothingCanReplaceRefusesTheEdit) {
  // a1's type is unknown to inference (a custom op), so nothing can stand in for it.
  const Model m = testing::parse_model(R"(
<ir_version: 8, opset_import: ["" : 17, "custom" : 1]>
g (float[2] x, bool c) => (float[2] y)
{
  y = If (c) <
    then_branch = t () => (float[2] a) { a1 = custom.Op(x)  a = Neg(a1) },
    else_branch = e () => (float[2] b) { b = Abs(x) }
  >
}
)");
  auto edited = extract_without(m, {0});
  ASSERT_FALSE(edited.ok());
  EXPECT_NE(edited.error().message().find("cannot be removed: nothing of type unknown replaces its output 'a1'"),
            std::string::npos)
      << edited.error().message();
}

}  // namespace
}  // namespace reduce
