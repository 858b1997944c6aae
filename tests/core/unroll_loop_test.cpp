// unroll_loop_nodes: a Loop (or Scan) replaced by the iterations it made computes what it computed
// (carried values, scan outputs, the iteration number, a condition the body computes, body
// weights, names that clash, a nested If reading a body value), the trip counters tell how many
// iterations a run made, and the ONNX checker accepts the result.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/model_io.h"
#include "core/unroll_loop.h"
#include "engine/engine.h"
#include "engine/optimized_support.h"
#include "test_support.h"

namespace reduce {
namespace {

// A while loop: it stops after the iteration where i reaches 2, or after M iterations.
constexpr const char* kModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] X, int64 M) => (float[2] Y, float[N,2] S)
{
  go = Constant <value = bool {1}> ()
  v = Relu(X)
  Y, S = Loop (M, go, v) <
    body = b (int64 i, bool c, float[2] a) => (bool c2, float[2] a2, float[2] s) <float[2] w = {2.0, 3.0}> {
      v = Mul(a, w)
      fi = Cast <to = 1> (i)
      a2 = Add(v, fi)
      s = If (c) <
        then_branch = tt () => (float[2] p) { p = Neg(a2) },
        else_branch = te () => (float[2] q) { q = Identity(a2) }
      >
      lim = Constant <value = int64 {2}> ()
      c2 = Less(i, lim)
    }
  >
}
)";

Tensor trip_limit(int64_t m) { return *Tensor::from_vector(DType::Int64, {}, std::vector<int64_t>{m}); }

TensorMap run(const Model& m, int64_t limit) {
  auto prepared = make_reference_engine()->prepare(m);
  EXPECT_TRUE(prepared.ok()) << prepared.error().message();
  if (!prepared.ok()) return {};
  auto out = (*prepared)->run({{"X", testing::floats({2}, {-1, 2})}, {"M", trip_limit(limit)}});
  EXPECT_TRUE(out.ok()) << out.error().message();
  return out.ok() ? *out : TensorMap{};
}

// The iterations the Loop makes with trip limit `limit`, from its trip counter.
int64_t counted_trips(const Model& m, int64_t limit) {
  Model counted = m;
  const auto counters = add_trip_counters(counted);
  EXPECT_EQ(counters.size(), 1u);
  if (counters.empty()) return -1;
  // The counter is not a graph output: ask for it. The outputs stay what they were.
  counted.graph.outputs.push_back({counters[0].second, ValueType{}, ""});
  const TensorMap out = run(counted, limit);
  EXPECT_EQ(testing::values(out.at("Y")), testing::values(run(m, limit).at("Y")));
  return out.count(counters[0].second) ? out.at(counters[0].second).shape().at(0) : -1;
}

TEST(UnrollLoop, TheIterationsComputeWhatTheLoopComputed) {
  const Model original = testing::parse_model(kModel);
  for (const int64_t limit : {5, 2, 1}) {
    const int64_t trips = counted_trips(original, limit);
    EXPECT_EQ(trips, std::min<int64_t>(limit, 3)) << "limit " << limit;
    Model unrolled = original;
    const UnrollResult r = unroll_loop_nodes(unrolled, [&](size_t position) -> std::optional<int64_t> {
      EXPECT_EQ(unrolled.graph.nodes.at(position).op_type, "Loop");
      return trips;
    });
    EXPECT_EQ(r.unrolled, 1u);
    EXPECT_EQ(r.iterations, static_cast<size_t>(trips));
    EXPECT_FALSE(has_loop_node(unrolled.graph));
    EXPECT_TRUE(check_model(unrolled).ok()) << check_model(unrolled).error().message();
    const TensorMap a = run(original, limit), b = run(unrolled, limit);
    for (const char* name : {"Y", "S"}) {
      EXPECT_EQ(a.at(name).shape(), b.at(name).shape()) << name << " limit " << limit;
      EXPECT_EQ(testing::values(a.at(name)), testing::values(b.at(name))) << name << " limit " << limit;
    }
    // The nested If of each iteration comes out at the top level.
    size_t ifs = 0;
    for (const Node& n : unrolled.graph.nodes) ifs += n.op_type == "If";
    EXPECT_EQ(ifs, static_cast<size_t>(trips));
  }
}

TEST(UnrollLoop, TheBodysDeclaredTypesHoldForEveryIteration) {
  Model m = testing::parse_model(kModel);
  auto loop = std::find_if(m.graph.nodes.begin(), m.graph.nodes.end(), [](const Node& n) { return n.op_type == "Loop"; });
  ASSERT_NE(loop, m.graph.nodes.end());
  Attribute& body = loop->attributes.at(0);
  ASSERT_EQ(body.name, "body");
  auto declared = std::make_shared<Graph>(*body.g);
  declared->value_info.push_back({"v", ValueType::tensor(DType::Float, {2}), ""});
  body.g = declared;
  unroll_loop_nodes(m, [](size_t) { return std::optional<int64_t>{3}; });
  ASSERT_FALSE(has_loop_node(m.graph));
  std::vector<std::string> typed;
  for (const ValueInfo& vi : m.graph.value_info) {
    EXPECT_EQ(vi.type.to_string(), "float[2]") << vi.name;
    typed.push_back(vi.name);
  }
  // One per iteration, each under that iteration's name of `v`.
  ASSERT_EQ(typed.size(), 3u);
  for (const Node& n : m.graph.nodes)
    if (n.op_type == "Mul") {
      EXPECT_NE(std::find(typed.begin(), typed.end(), n.outputs.at(0)), typed.end()) << n.outputs[0];
    }
}

TEST(UnrollLoop, UnknownTripCountsKeepTheLoop) {
  Model m = testing::parse_model(kModel);
  const UnrollResult r = unroll_loop_nodes(m, [](size_t) { return std::optional<int64_t>{}; });
  EXPECT_EQ(r.unrolled, 0u);
  EXPECT_TRUE(r.skipped.empty());
  EXPECT_TRUE(has_loop_node(m.graph));
}

TEST(UnrollLoop, NoIterationWithScanOutputsKeepsTheLoopAndSaysWhy) {
  Model m = testing::parse_model(kModel);
  const UnrollResult r = unroll_loop_nodes(m, [](size_t) { return std::optional<int64_t>{0}; });
  EXPECT_EQ(r.unrolled, 0u);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].find("scan outputs"), std::string::npos) << r.skipped[0];
}

TEST(UnrollLoop, MoreNodesThanTheBudgetKeepTheLoopAndSaysWhy) {
  Model m = testing::parse_model(kModel);
  const UnrollResult r = unroll_loop_nodes(m, [](size_t) { return std::optional<int64_t>{1000}; }, 500);
  EXPECT_EQ(r.unrolled, 0u);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].find("budget of 500 nodes"), std::string::npos) << r.skipped[0];
  EXPECT_TRUE(has_loop_node(m.graph));
}

// A Scan with a state, two scan inputs (one on axis 1, one read from the end) and two scan outputs
// (one on axis 1, one stacked in reverse), as exported recurrent cells are.
constexpr const char* kScan = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] S0, float[2, 4] A, float[4, 2] B) => (float[2] S, float[2, 4] P, float[4, 2] Q)
{
  S, P, Q = Scan <num_scan_inputs = 2, scan_input_axes = [1, 0], scan_input_directions = [0, 1],
                  scan_output_axes = [1, 0], scan_output_directions = [0, 1],
    body = b (float[2] s, float[2] a, float[2] bb) => (float[2] s2, float[2] p, float[2] q) {
      t = Mul(a, bb)
      s2 = Add(s, t)
      p = Identity(s2)
      q = Sub(s2, a)
    }
  > (S0, A, B)
}
)";

TEST(UnrollScan, TheIterationsComputeWhatTheScanComputed) {
  const Model original = testing::parse_model(kScan);
  ASSERT_TRUE(has_loop_or_scan(original.graph));
  const auto trips = scan_trips(original.graph.nodes.at(0), [](const std::string& name) -> std::optional<Shape> {
    if (name == "A") return Shape{2, 4};  // its scan axis is 1
    return std::nullopt;
  });
  ASSERT_EQ(trips, std::optional<int64_t>(4));
  Model unrolled = original;
  const UnrollResult r = unroll_loop_nodes(unrolled, [&](size_t) { return trips; });
  EXPECT_EQ(r.unrolled, 1u);
  EXPECT_EQ(r.iterations, 4u);
  EXPECT_FALSE(has_loop_or_scan(unrolled.graph));
  EXPECT_TRUE(check_model(unrolled).ok()) << check_model(unrolled).error().message();
  const TensorMap inputs = {{"S0", testing::floats({2}, {1, -1})},
                            {"A", testing::floats({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})},
                            {"B", testing::floats({4, 2}, {0.5f, -1, 2, 3, -2, 0.25f, 1, 4})}};
  auto run = [&](const Model& m) {
    auto prepared = make_reference_engine()->prepare(m);
    EXPECT_TRUE(prepared.ok()) << prepared.error().message();
    auto out = prepared.ok() ? (*prepared)->run(inputs) : Expected<TensorMap>(make_error("not prepared"));
    EXPECT_TRUE(out.ok()) << out.error().message();
    return out.ok() ? *out : TensorMap{};
  };
  const TensorMap a = run(original), b = run(unrolled);
  for (const char* name : {"S", "P", "Q"}) {
    ASSERT_TRUE(a.count(name) && b.count(name)) << name;
    EXPECT_EQ(a.at(name).shape(), b.at(name).shape()) << name;
    EXPECT_EQ(testing::values(a.at(name)), testing::values(b.at(name))) << name;
  }
}

TEST(UnrollScan, ABatchedScanOfOpset8StaysAndSaysWhy) {
  Model m = testing::parse_model(kScan);
  m.opset_imports = {{"", 8}};
  const UnrollResult r = unroll_loop_nodes(m, [](size_t) { return std::optional<int64_t>{4}; });
  EXPECT_EQ(r.unrolled, 0u);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].find("opset 8"), std::string::npos) << r.skipped[0];
}

}  // namespace
}  // namespace reduce
