// The `ort` engine: ONNX Runtime in a persistent Node.js worker; values, intermediate outputs, load
// errors, and a worker that aborts, hangs or is cancelled (the worker script's test hooks).
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "adapters/engine_spec.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;
using testing::TempDir;
using testing::write_bytes;

const char* kModel = R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[3] X) => (float[3] Y)
{
  h = Relu(X)
  Y = Add(h, X)
}
)";

Tensor floats(std::vector<float> v) { return Tensor::from_vector(DType::Float, {static_cast<int64_t>(v.size())}, v).value(); }

std::vector<float> values(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

// The installation the tests use (CTest's onnxruntime fixture fills it), named for the worker.
EngineEnvironment ort_environment(std::vector<std::string> env = {}, double timeout_seconds = 0) {
  EngineEnvironment environment;
  environment.env = {"REDUCE_ORT_DIR=" + std::string(REDUCE_ORT_DIR)};
  environment.env.insert(environment.env.end(), env.begin(), env.end());
  environment.timeout_seconds = timeout_seconds;
  return environment;
}

std::unique_ptr<Engine> ort_engine(const EngineEnvironment& environment, std::string_view spec = "ort") {
  auto engine = make_engine(spec, environment);
  EXPECT_TRUE(engine.ok()) << engine.error().message();
  return engine.ok() ? std::move(engine).value() : nullptr;
}

TEST(OrtEngine, RunsAModelAndReturnsIntermediateValues) {
  auto engine = ort_engine(ort_environment());
  ASSERT_TRUE(engine);
  EXPECT_EQ(engine->name(), "ort");
  Model m = parse_model(kModel);
  auto prepared = engine->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  auto out = (*prepared)->run({{"X", floats({-1, 2, -3})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->size(), 1u);
  EXPECT_EQ(values(out->at("Y")), (std::vector<float>{-1, 4, -3}));
  RunOptions options;
  options.outputs = {"h", "Y"};  // h is not a graph output: a second session exposes it
  auto both = (*prepared)->run({{"X", floats({-1, 2, -3})}}, options);
  ASSERT_TRUE(both.ok()) << both.error().message();
  EXPECT_EQ(values(both->at("h")), (std::vector<float>{0, 2, 0}));
  EXPECT_EQ(values(both->at("Y")), (std::vector<float>{-1, 4, -3}));
}

TEST(OrtEngine, IntegerBoolAndHalfTensorsKeepTheirTypeAndBytes) {
  auto engine = ort_engine(ort_environment());
  ASSERT_TRUE(engine);
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (int64[2] A, bool[3] B, float16[2] C) => (int64[2] A2, bool[3] NB, float16[2] C2)
{
  A2 = Add(A, A)
  NB = Not(B)
  C2 = Identity(C)
}
)");
  auto prepared = engine->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  const Tensor a = Tensor::from_vector(DType::Int64, {2}, std::vector<int64_t>{int64_t{1} << 40, -7}).value();
  const Tensor b = Tensor::from_vector(DType::Bool, {3}, std::vector<uint8_t>{1, 0, 1}).value();
  const Tensor c = Tensor::from_vector(DType::Float16, {2}, std::vector<uint16_t>{0x3c00, 0xc000}).value();
  auto out = (*prepared)->run({{"A", a}, {"B", b}, {"C", c}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_TRUE(out->at("A2").equals(Tensor::from_vector(DType::Int64, {2}, std::vector<int64_t>{int64_t{1} << 41, -14}).value()));
  EXPECT_TRUE(out->at("NB").equals(Tensor::from_vector(DType::Bool, {3}, std::vector<uint8_t>{0, 1, 0}).value()));
  EXPECT_TRUE(out->at("C2").equals(c));
}

TEST(OrtEngine, AModelOnnxRuntimeRefusesFailsAtPrepareWithItsMessage) {
  auto engine = ort_engine(ort_environment());
  ASSERT_TRUE(engine);
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[3] X) => (float[3] Y)
{
  Y = NoSuchOperator(X)
}
)");
  auto prepared = engine->prepare(m);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.error().kind, ErrorKind::Error);
  EXPECT_EQ(prepared.error().what.rfind("ONNX Runtime: ", 0), 0u) << prepared.error().what;
  EXPECT_NE(prepared.error().what.find("NoSuchOperator"), std::string::npos) << prepared.error().what;
  EXPECT_EQ(prepared.error().what.find('\n'), std::string::npos);
  // The worker survives a refusal: the next model loads and runs.
  Model good = parse_model(kModel);
  auto again = engine->prepare(good);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_TRUE((*again)->run({{"X", floats({1, 1, 1})}}).ok());
}

TEST(OrtEngine, AWorkerThatAbortsIsACrashAndTheNextRunStartsAFreshOne) {
  TempDir dir;
  const auto trigger = dir / "crash";
  auto engine = ort_engine(ort_environment({"REDUCE_ORT_WORKER_CRASH_FILE=" + trigger.string()}));
  ASSERT_TRUE(engine);
  Model m = parse_model(kModel);
  auto prepared = engine->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  ASSERT_TRUE((*prepared)->run({{"X", floats({1, 2, 3})}}).ok());
  write_bytes(trigger, "");
  auto crashed = (*prepared)->run({{"X", floats({1, 2, 3})}});
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.error().kind, ErrorKind::Crash) << crashed.error().message();
  EXPECT_EQ(crashed.error().signal, SIGABRT) << crashed.error().message();
  EXPECT_FALSE(std::filesystem::exists(trigger));  // the hook fired once
  // The same prepared model runs again: a new worker, its session loaded again.
  auto after = (*prepared)->run({{"X", floats({-1, 2, -3})}});
  ASSERT_TRUE(after.ok()) << after.error().message();
  EXPECT_EQ(values(after->at("Y")), (std::vector<float>{-1, 4, -3}));
}

TEST(OrtEngine, AHungWorkerIsKilledAtTheTimeLimitAndReplaced) {
  TempDir dir;
  const auto trigger = dir / "hang";
  auto engine = ort_engine(ort_environment({"REDUCE_ORT_WORKER_HANG_FILE=" + trigger.string()}, 1));
  ASSERT_TRUE(engine);
  Model m = parse_model(kModel);
  auto prepared = engine->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  write_bytes(trigger, "");
  auto hung = (*prepared)->run({{"X", floats({1, 2, 3})}});
  ASSERT_FALSE(hung.ok());
  EXPECT_EQ(hung.error().kind, ErrorKind::Timeout) << hung.error().message();
  EXPECT_NE(hung.error().what.find("timed out after 1 s"), std::string::npos) << hung.error().what;
  auto after = (*prepared)->run({{"X", floats({1, 2, 3})}});
  ASSERT_TRUE(after.ok()) << after.error().message();
}

TEST(OrtEngine, CancelReachesAHungRunAndTheWorkerIsReplaced) {
  TempDir dir;
  const auto trigger = dir / "hang";
  // The time limit is only a safety net: the cancel must end the run long before it.
  auto engine = ort_engine(ort_environment({"REDUCE_ORT_WORKER_HANG_FILE=" + trigger.string()}, 600));
  ASSERT_TRUE(engine);
  Model m = parse_model(kModel);
  auto prepared = engine->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  write_bytes(trigger, "");
  std::atomic<bool> cancel{false};
  // The worker deletes the trigger when it starts to hang: that event, not a delay, sets the flag.
  std::thread canceller([&] {
    while (std::filesystem::exists(trigger)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cancel.store(true);
  });
  RunOptions options;
  options.cancel = &cancel;
  auto cancelled = (*prepared)->run({{"X", floats({1, 2, 3})}}, options);
  canceller.join();
  ASSERT_FALSE(cancelled.ok());
  EXPECT_EQ(cancelled.error().kind, ErrorKind::Error);
  EXPECT_EQ(cancelled.error().what, "cancelled");
  auto after = (*prepared)->run({{"X", floats({1, 2, 3})}});
  ASSERT_TRUE(after.ok()) << after.error().message();
}

TEST(OrtEngine, ConcurrentRunsOnOneEngineAreIndependent) {
  auto engine = ort_engine(ort_environment());
  ASSERT_TRUE(engine);
  Model m = parse_model(kModel);
  std::vector<std::thread> threads;
  std::vector<std::string> problems(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      auto prepared = engine->prepare(m);
      if (!prepared) return void(problems[t] = prepared.error().message());
      for (int r = 0; r < 5; ++r) {
        const float x = static_cast<float>(t * 10 + r);
        auto out = (*prepared)->run({{"X", floats({x, -x, 0})}});
        if (!out) return void(problems[t] = out.error().message());
        if (values(out->at("Y")) != std::vector<float>{2 * x, -x, 0}) problems[t] = "wrong values in run " + std::to_string(r);
      }
    });
  for (auto& t : threads) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(problems[t], "") << "thread " << t;
}

TEST(OrtEngine, AMissingInstallationInTheUsersFolderIsOneLineNamingTheFolderAndTheWayOut) {
  EngineEnvironment environment;
  environment.env = {"REDUCE_ORT_DIR=/nonexistent/ort"};
  auto engine = make_engine("ort:opt=basic", environment);
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.error().where, "ort:opt=basic");
  EXPECT_NE(engine.error().what.find("/nonexistent/ort"), std::string::npos) << engine.error().what;
  EXPECT_NE(engine.error().what.find("unset REDUCE_ORT_DIR"), std::string::npos) << engine.error().what;
  EXPECT_NE(engine.error().what.find("npm install onnxruntime-node@1.30.0"), std::string::npos) << engine.error().what;
  EXPECT_EQ(engine.error().message().find('\n'), std::string::npos);
}

TEST(OrtEngine, AProviderThePackageDoesNotShipIsRefusedUpFront) {
  // onnxruntime-node lists CUDA, but install.sh skips the download of its libraries.
  const auto library = std::filesystem::path(REDUCE_ORT_DIR) / "node_modules/onnxruntime-node/bin/napi-v6/linux/x64" /
                       "libonnxruntime_providers_cuda.so";
  if (std::filesystem::exists(library)) GTEST_SKIP() << "this installation has the CUDA provider";
  auto engine = make_engine("ort:ep=cuda", ort_environment());
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.error().where, "ort:ep=cuda");
  EXPECT_NE(engine.error().what.find("execution provider 'cuda' is not in the installed onnxruntime-node"),
            std::string::npos)
      << engine.error().what;
  EXPECT_NE(engine.error().what.find("cpu"), std::string::npos) << engine.error().what;  // what it has
}

TEST(OrtEngine, OptimizationLevelsAndThreadsGiveTheSameValuesOnASmallModel) {
  Model m = parse_model(kModel);
  for (const char* spec : {"ort:opt=disable", "ort:opt=basic,threads=1", "ort:opt=extended", "ort:threads=2"}) {
    auto engine = ort_engine(ort_environment(), spec);
    ASSERT_TRUE(engine) << spec;
    EXPECT_EQ(engine->name(), spec);
    auto prepared = engine->prepare(m);
    ASSERT_TRUE(prepared.ok()) << spec << ": " << prepared.error().message();
    auto out = (*prepared)->run({{"X", floats({-1, 2, -3})}});
    ASSERT_TRUE(out.ok()) << spec << ": " << out.error().message();
    EXPECT_EQ(values(out->at("Y")), (std::vector<float>{-1, 4, -3})) << spec;
  }
}

}  // namespace
}  // namespace reduce
