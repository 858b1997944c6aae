// Streaming runs (RunOptions::on_output): every requested value is handed over once, as computed,
// with the values of an ordinary run, and a run with every value requested holds only what later
// nodes need (counted by the run's MemoryLedger).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "adapters/engine_spec.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;

// A chain of 12 elementwise nodes over 4 KiB values, and a side branch read at the end.
const char* kChain = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1024] X) => (float[1024] Y)
{
  a1 = Relu(X)
  a2 = Neg(a1)
  a3 = Abs(a2)
  side = Sqrt(a3)
  a4 = Exp(a3)
  a5 = Neg(a4)
  a6 = Abs(a5)
  a7 = Log(a6)
  a8 = Neg(a7)
  a9 = Abs(a8)
  a10 = Sqrt(a9)
  Y = Add(a10, side)
}
)";

std::vector<std::string> every_value(const Model& m) {
  std::vector<std::string> names;
  for (const Node& n : m.graph.nodes) names.push_back(n.outputs[0]);
  return names;
}

Tensor ramp() {
  std::vector<float> v(1024);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) / 100.0f - 3.0f;
  return Tensor::from_vector(DType::Float, {1024}, v).value();
}

class StreamingRun : public ::testing::TestWithParam<const char*> {};

TEST_P(StreamingRun, HandsOverEveryRequestedValueOnceInNodeOrderWithTheOrdinaryValues) {
  const Model m = parse_model(kChain);
  EngineEnvironment env;
  auto engine = make_engine(GetParam(), env);
  ASSERT_TRUE(engine.ok()) << engine.error().message();
  auto prepared = (*engine)->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  EXPECT_TRUE((*prepared)->streams_outputs());
  RunOptions ro;
  ro.outputs = every_value(m);
  ro.outputs.push_back("X");  // an input: handed over too
  const TensorMap feed{{"X", ramp()}};
  auto ordinary = (*prepared)->run(feed, ro);
  ASSERT_TRUE(ordinary.ok()) << ordinary.error().message();
  std::vector<std::string> order;
  auto streamed = run_streaming(**prepared, feed, ro, [&](const std::string& name, Tensor value) -> Status {
    EXPECT_TRUE(value.equals(ordinary->at(name))) << name;
    order.push_back(name);
    return {};
  });
  ASSERT_TRUE(streamed.ok()) << streamed.error().message();
  std::vector<std::string> expected = every_value(m);
  expected.push_back("X");
  EXPECT_EQ(order, expected);
}

TEST_P(StreamingRun, HoldsOnlyWhatLaterNodesReadWhenEveryValueIsRequested) {
  const Model m = parse_model(kChain);
  auto peak_with = [&](bool stream) {
    EngineEnvironment env;
    env.ledger = std::make_shared<MemoryLedger>();
    auto engine = make_engine(GetParam(), env).value();
    auto prepared = engine->prepare(m).value();
    RunOptions ro;
    ro.outputs = every_value(m);
    const TensorMap feed{{"X", ramp()}};
    if (stream) EXPECT_TRUE(run_streaming(*prepared, feed, ro, [](const std::string&, Tensor) { return Status{}; }).ok());
    else EXPECT_TRUE(prepared->run(feed, ro).ok());
    EXPECT_EQ(env.ledger->held(), 0u);  // everything charged was given back
    return env.ledger->peak();
  };
  const uint64_t value = 1024 * sizeof(float);
  // An ordinary run keeps all 12 values to return them; a streaming one at most the value being
  // computed, its input, and `side` (read by the last node).
  EXPECT_EQ(peak_with(false), 12 * value);
  EXPECT_LE(peak_with(true), 3 * value);
}

TEST_P(StreamingRun, AnErrorFromTheReceiverEndsTheRunWithIt) {
  const Model m = parse_model(kChain);
  auto prepared = make_engine(GetParam()).value()->prepare(m).value();
  RunOptions ro;
  ro.outputs = every_value(m);
  int received = 0;
  auto st = run_streaming(*prepared, {{"X", ramp()}}, ro, [&](const std::string& name, Tensor) -> Status {
    ++received;
    if (name == "a3") return make_error("disk full");
    return {};
  });
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message(), "disk full");
  EXPECT_EQ(received, 3);
}

INSTANTIATE_TEST_SUITE_P(InProcessEngines, StreamingRun, ::testing::Values("ref", "opt", "opt:fp16"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) if (c == ':') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace reduce
