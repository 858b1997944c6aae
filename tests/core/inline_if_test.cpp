// inline_if_nodes: an If replaced by its taken branch computes what the If computed (names that
// clash are made unique, outputs that the branch does not compute get an Identity, references in
// nested subgraphs follow renamed values), and the ONNX checker accepts the result.
#include <gtest/gtest.h>

#include "core/inline_if.h"
#include "core/model_io.h"
#include "engine/engine.h"
#include "engine/optimized_support.h"
#include "test_support.h"

namespace reduce {
namespace {

// `z` is defined both outside and inside the then-branch (a clash), and a nested If inside the
// then-branch reads the branch's own `z` (a renamed value referenced from a nested subgraph).
constexpr const char* kModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] X) => (float[2] Y, float[2] W)
<float zero = {0.0}>
{
  z = Relu(X)
  s = ReduceSum <keepdims = 0> (X)
  c = Greater(s, zero)
  Y, W = If (c) <
    then_branch = t () => (float[2] a, float[2] o) {
      z = Neg(X)
      o = Identity(z)
      a = If (c) <
        then_branch = tt () => (float[2] p) { p = Add(z, X) },
        else_branch = te () => (float[2] q) { q = Identity(z) }
      >
    },
    else_branch = e () => (float[2] b, float[2] o2) { b = Sub(z, X)  o2 = Identity(X) }
  >
}
)";

TensorMap run(const Model& m, std::vector<float> x) {
  auto prepared = make_reference_engine()->prepare(m);
  EXPECT_TRUE(prepared.ok()) << prepared.error().message();
  auto out = (*prepared)->run({{"X", testing::floats({2}, std::move(x))}});
  EXPECT_TRUE(out.ok()) << out.error().message();
  return out.ok() ? *out : TensorMap{};
}

TEST(InlineIf, TheTakenBranchComputesWhatTheIfComputed) {
  Model original = testing::parse_model(kModel);
  for (const std::vector<float>& x : {std::vector<float>{1, 2}, std::vector<float>{-3, 1}}) {
    const bool positive = x[0] + x[1] > 0;
    Model inlined = original;
    const InlineResult r = inline_if_nodes(inlined, [&](const std::string& name) -> std::optional<bool> {
      if (name == "c") return positive;
      return std::nullopt;
    });
    EXPECT_EQ(r.inlined, 1u);
    size_t ifs = 0;
    for (const Node& n : inlined.graph.nodes) ifs += n.op_type == "If";
    // The nested If comes out at the top level (its condition known next time); the else branch has none.
    EXPECT_EQ(ifs, positive ? 1u : 0u);
    EXPECT_TRUE(check_model(inlined).ok()) << check_model(inlined).error().message();
    const TensorMap a = run(original, x), b = run(inlined, x);
    for (const char* name : {"Y", "W"})
      EXPECT_EQ(testing::values(a.at(name)), testing::values(b.at(name))) << name << " x0 " << x[0];
    // A second call inlines the nested If.
    if (positive) {
      const InlineResult again = inline_if_nodes(inlined, [](const std::string&) { return std::optional<bool>{true}; });
      EXPECT_EQ(again.inlined, 1u);
      EXPECT_EQ(count_body_nodes(inlined.graph), 0u);
      EXPECT_EQ(testing::values(run(inlined, x).at("Y")), testing::values(a.at("Y")));
    }
  }
}

TEST(InlineIf, UnknownConditionsKeepTheIf) {
  Model m = testing::parse_model(kModel);
  const size_t body = count_body_nodes(m.graph);
  EXPECT_GT(body, 0u);
  const InlineResult r = inline_if_nodes(m, [](const std::string&) { return std::optional<bool>{}; });
  EXPECT_EQ(r.inlined, 0u);
  EXPECT_EQ(count_body_nodes(m.graph), body);
}

}  // namespace
}  // namespace reduce
