// Budgets of in-process runs: a loop that never ends times out or is cancelled, a run that would
// hold more than its memory limit stops with an error naming the limit, and runs within their
// budget give the same values as without one. Also from the CLI (--timeout, --max-memory).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "adapters/engine_spec.h"
#include "process_support.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;

// Loops 10^18 times (the condition stays true): only a limit or a cancel ends it.
const char* kEndlessLoop = R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2] X) => (float[2] Y)
{
  cond = Constant <value = bool {1}> ()
  m = Constant <value = int64 {1000000000000000000}> ()
  Y = Loop (m, cond, X) <body = body (int64 i, bool c, float[2] x) => (bool co, float[2] xo) {
    co = Identity(c)
    xo = Relu(x)
  }>
}
)";

// Stacks 4 KB per iteration, 10^18 times: memory grows until a limit stops it.
const char* kGrowingScan = R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[1024] X) => (float[1024] Y, float[N,1024] S)
{
  cond = Constant <value = bool {1}> ()
  m = Constant <value = int64 {1000000000000000000}> ()
  Y, S = Loop (m, cond, X) <body = body (int64 i, bool c, float[1024] x) => (bool co, float[1024] xo, float[1024] so) {
    co = Identity(c)
    xo = Identity(x)
    so = Relu(x)
  }>
}
)";

const char* kSmallLoop = R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2] X) => (float[2] Y, float[3,2] S)
{
  cond = Constant <value = bool {1}> ()
  m = Constant <value = int64 {3}> ()
  Y, S = Loop (m, cond, X) <body = body (int64 i, bool c, float[2] x) => (bool co, float[2] xo, float[2] so) {
    co = Identity(c)
    xo = Add(x, x)
    so = Relu(x)
  }>
}
)";

Tensor floats(std::vector<float> v) { return Tensor::from_vector(DType::Float, {static_cast<int64_t>(v.size())}, v).value(); }

Expected<TensorMap> run_with(const std::string& spec, const Model& model, const TensorMap& feed, EngineEnvironment env,
                             const std::atomic<bool>* cancel = nullptr) {
  REDUCE_ASSIGN(auto engine, make_engine(spec, env));
  REDUCE_ASSIGN(auto prepared, engine->prepare(model));
  RunOptions options;
  options.cancel = cancel;
  return prepared->run(feed, options);
}

class RunLimits : public ::testing::TestWithParam<std::string> {};

TEST_P(RunLimits, AnEndlessLoopEndsAsATimeoutNamingTheLoop) {
  const Model m = parse_model(kEndlessLoop);
  EngineEnvironment env;
  env.timeout_seconds = 0.5;
  // That the call returns at all shows the limit holds; the kind makes it a `timeout` verdict.
  auto out = run_with(GetParam(), m, {{"X", floats({1, -1})}}, env);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::Timeout) << out.error().message();
  EXPECT_NE(out.error().what.find("(Loop)"), std::string::npos) << out.error().what;
  EXPECT_NE(out.error().what.find("--timeout"), std::string::npos) << out.error().what;
}

TEST_P(RunLimits, ACancelStopsAnEndlessLoop) {
  const Model m = parse_model(kEndlessLoop);
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel.store(true);
  });
  auto out = run_with(GetParam(), m, {{"X", floats({1, -1})}}, {}, &cancel);
  canceller.join();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::Error);
  EXPECT_NE(out.error().what.find("cancelled"), std::string::npos) << out.error().what;
}

TEST_P(RunLimits, GrowingScanOutputsStopAtTheMemoryLimit) {
  const Model m = parse_model(kGrowingScan);
  EngineEnvironment env;
  env.max_memory_bytes = 8 << 20;
  env.timeout_seconds = 600;  // bounds the test should the memory limit be ignored
  auto out = run_with(GetParam(), m, {{"X", Tensor::allocate(DType::Float, {1024}).value()}}, env);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::Error);
  EXPECT_NE(out.error().what.find("memory limit of 8 MiB (--max-memory)"), std::string::npos) << out.error().what;
}

TEST_P(RunLimits, AnOutputLargerThanTheMemoryLimitIsNotAllocated) {
  const Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (int64[4] S) => (float[A,B,C,D] Y)
{
  Y = ConstantOfShape(S)
}
)");
  EngineEnvironment env;
  env.max_memory_bytes = 1 << 20;
  auto shape = Tensor::from_vector<int64_t>(DType::Int64, {4}, {64, 64, 64, 64}).value();  // 64 MiB of floats
  auto out = run_with(GetParam(), m, {{"S", shape}}, env);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().what.find("--max-memory"), std::string::npos) << out.error().what;
}

TEST_P(RunLimits, RunsWithinTheirBudgetGiveTheSameValues) {
  const Model m = parse_model(kSmallLoop);
  EngineEnvironment limited;
  limited.timeout_seconds = 600;
  limited.max_memory_bytes = 1 << 20;
  const TensorMap feed{{"X", floats({1, -2})}};
  auto free_run = run_with(GetParam(), m, feed, {});
  auto bounded = run_with(GetParam(), m, feed, limited);
  ASSERT_TRUE(free_run.ok()) << free_run.error().message();
  ASSERT_TRUE(bounded.ok()) << bounded.error().message();
  for (const char* name : {"Y", "S"}) EXPECT_TRUE(free_run->at(name).equals(bounded->at(name))) << name;
  auto y = bounded->at("Y").data<float>();
  EXPECT_EQ(std::vector<float>(y.begin(), y.end()), (std::vector<float>{8, -16}));
}

INSTANTIATE_TEST_SUITE_P(InProcessEngines, RunLimits, ::testing::Values("ref", "opt", "opt:fp16"),
                         [](const auto& info) { return info.param == "opt:fp16" ? std::string("opt_fp16") : info.param; });

// --- from the CLI ---------------------------------------------------------------------------

struct LoopFile {
  testing::TempDir dir;
  std::string path = (dir / "loop.onnxtxt").string();
  LoopFile() { testing::write_bytes(path, kEndlessLoop); }
};

TEST(RunLimitsCli, AnEndlessLoopInTheReferenceIsOneLineNamingTheTimeout) {
  LoopFile f;
  for (const char* command : {"check", "run"}) {
    auto r = testing::run_reduce({command, f.path, "--timeout", "1", "--engine", "opt"});
    EXPECT_EQ(r.exit_code, std::string(command) == "run" ? 1 : 2) << command << r.out << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("time limit of 1 s (--timeout)"), std::string::npos) << r.err;
  }
}

TEST(RunLimitsCli, BadMemoryLimitsAreRefusedUpFront) {
  LoopFile f;
  for (const char* bad : {"12Q", "-1G", "0", "nan", "inf", "G", "1e30T"}) {
    auto r = testing::run_reduce({"check", f.path, "--max-memory", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_EQ(r.err.rfind("error: --max-memory: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(RunLimitsCli, EveryRunHasADefaultTimeout) {
  auto r = testing::run_reduce({"check", "--help"});
  EXPECT_NE(r.out.find("--timeout arg (=3600)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace reduce
