// Isolated engines: runs in a worker process; a worker that crashes or hangs becomes an error, the caller survives.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include "adapters/engine_spec.h"
#include "adapters/isolated_worker.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;

const char* kIdentity = R"(
<ir_version: 8, opset_import: ["" : 15]>
identity (float[3] X) => (float[3] Y)
{
  h = Relu(X)
  Y = Identity(X)
}
)";

Tensor floats(std::vector<float> v) { return Tensor::from_vector(DType::Float, {static_cast<int64_t>(v.size())}, v).value(); }

std::vector<float> values(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

EngineEnvironment test_worker(double timeout_seconds = 0) {
  EngineEnvironment env;
  env.worker_program = std::string(REDUCE_BINARY_DIR) + "/test_engine_worker";
  env.timeout_seconds = timeout_seconds;
  return env;
}

TEST(IsolatedEngine, RunsTheInnerEngineInAWorker) {
  EngineEnvironment env;
  env.worker_program = std::string(REDUCE_BINARY_DIR) + "/reduce";
  auto engine = make_engine("isolated:ref", env);
  ASSERT_TRUE(engine.ok()) << engine.error().message();
  EXPECT_EQ((*engine)->name(), "isolated:ref");
  Model m = parse_model(kIdentity);
  auto prepared = (*engine)->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  RunOptions options;
  options.outputs = {"h", "Y"};
  auto out = (*prepared)->run({{"X", floats({-1, 2, -3})}}, options);
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("h")), (std::vector<float>{0, 2, 0}));
  EXPECT_EQ(values(out->at("Y")), (std::vector<float>{-1, 2, -3}));
}

TEST(IsolatedEngine, AModelWithoutInputsRuns) {
  EngineEnvironment env;
  env.worker_program = std::string(REDUCE_BINARY_DIR) + "/reduce";
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g () => (float[2] Y)
<float[2] C = {1, -2}>
{
  Y = Relu(C)
}
)");
  auto engine = make_engine("isolated:ref", env);
  ASSERT_TRUE(engine.ok());
  auto prepared = (*engine)->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  auto out = (*prepared)->run({});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("Y")), (std::vector<float>{1, 0}));
}

TEST(IsolatedEngine, InnerEngineErrorsComeBackAsErrors) {
  EngineEnvironment env;
  env.worker_program = std::string(REDUCE_BINARY_DIR) + "/reduce";
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15, "custom" : 1]>
g (float[3] X) => (float[3] Y)
{
  Y = custom.Unknown(X)
}
)");
  auto engine = make_engine("isolated:ref", env);
  ASSERT_TRUE(engine.ok());
  auto prepared = (*engine)->prepare(m);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.error().kind, ErrorKind::Error);
  EXPECT_NE(prepared.error().what.find("Unknown"), std::string::npos) << prepared.error().what;
}

TEST(IsolatedEngine, ACrashIsReportedWithItsSignalAndTheNextRunGetsAFreshWorker) {
  auto engine = make_isolated_engine("test-crash:11", test_worker());
  ASSERT_TRUE(engine.ok()) << engine.error().message();
  Model m = parse_model(kIdentity);
  auto prepared = (*engine)->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  auto crashed = (*prepared)->run({{"X", floats({-1, 2, 3})}});
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.error().kind, ErrorKind::Crash);
  EXPECT_EQ(crashed.error().signal, SIGSEGV);
  EXPECT_NE(crashed.error().what.find("killed by SIGSEGV"), std::string::npos) << crashed.error().what;
  auto fine = (*prepared)->run({{"X", floats({1, 2, 3})}});
  ASSERT_TRUE(fine.ok()) << fine.error().message();
  EXPECT_EQ(values(fine->at("Y")), (std::vector<float>{1, 2, 3}));
}

TEST(IsolatedEngine, AnAbortIsACrashBySigabrt) {
  auto engine = make_isolated_engine("test-crash:6", test_worker());
  ASSERT_TRUE(engine.ok());
  Model m = parse_model(kIdentity);
  auto prepared = (*engine)->prepare(m);
  ASSERT_TRUE(prepared.ok());
  auto crashed = (*prepared)->run({{"X", floats({-1, 2, 3})}});
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.error().kind, ErrorKind::Crash);
  EXPECT_EQ(crashed.error().signal, SIGABRT);
}

TEST(IsolatedEngine, AHangingRunIsKilledAtTheTimeout) {
  // The limit bounds every request, the worker's start and load included: long enough that a
  // loaded machine running sanitizer builds still loads the model in time (0.5 s did not, in CI).
  auto engine = make_isolated_engine("test-hang", test_worker(5));
  ASSERT_TRUE(engine.ok());
  Model m = parse_model(kIdentity);
  auto prepared = (*engine)->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  // The worker never returns from this run: that the call returns at all means it was killed.
  auto hung = (*prepared)->run({{"X", floats({1, 2, 3})}});
  ASSERT_FALSE(hung.ok());
  EXPECT_EQ(hung.error().kind, ErrorKind::Timeout);
}

TEST(IsolatedEngine, ConcurrentRunsUseSeparateWorkers) {
  auto engine = make_isolated_engine("test-crash:11", test_worker());
  ASSERT_TRUE(engine.ok());
  Model m = parse_model(kIdentity);
  auto prepared = (*engine)->prepare(m);
  ASSERT_TRUE(prepared.ok());
  std::vector<std::thread> threads;
  std::vector<int> outcome(8, -1);
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      const float first = i % 2 ? -1.0f : static_cast<float>(i);
      auto out = (*prepared)->run({{"X", floats({first, 0, 0})}});
      outcome[i] = out.ok() ? (values(out->at("Y"))[0] == first ? 1 : 0) : (out.error().kind == ErrorKind::Crash ? 2 : 3);
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(outcome[i], i % 2 ? 2 : 1) << "run " << i;
}

TEST(IsolatedEngine, ACancelledCommandIsKilledAndItsWorkerServesTheNextRun) {
  testing::TempDir dir;
  // Each run records its worker (the script's parent); while `hang` exists it sleeps, else it
  // runs the model with `reduce run`.
  const std::string reduce_bin = std::string(REDUCE_BINARY_DIR) + "/reduce";
  testing::write_bytes(dir / "engine.sh",
                       "#!/bin/sh\necho $PPID >> " + (dir / "workers").string() + "\n"
                       "if [ -f " + (dir / "hang").string() + " ]; then echo $$ > " + (dir / "pid").string() +
                       "; exec sleep 1000; fi\n" + reduce_bin + " run \"$1\" --inputs \"$2\" --save-outputs \"$3\"\n");
  testing::write_bytes(dir / "hang", "");
  EngineEnvironment env;
  env.worker_program = reduce_bin;
  env.timeout_seconds = 30;  // bounds the test should the cancel be ignored
  auto engine = make_engine("isolated:cmd:sh " + (dir / "engine.sh").string() + " {model} {inputs} {outputs}", env);
  ASSERT_TRUE(engine.ok()) << engine.error().message();
  Model m = parse_model(kIdentity);
  auto prepared = (*engine)->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    // Cancels once the command runs (at most 20 s later).
    for (int i = 0; i < 1000 && !std::filesystem::exists(dir / "pid"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    cancel.store(true);
  });
  RunOptions options;
  options.cancel = &cancel;
  auto cancelled = (*prepared)->run({{"X", floats({-1, 2, -3})}}, options);
  canceller.join();
  EXPECT_FALSE(cancelled.ok());
  const std::string pid = testing::read_bytes(dir / "pid");
  ASSERT_FALSE(pid.empty());
  EXPECT_FALSE(std::filesystem::exists("/proc/" + pid.substr(0, pid.find('\n')) + "/cmdline"))
      << "the cancelled command still runs";
  std::filesystem::remove(dir / "hang");
  auto out = (*prepared)->run({{"X", floats({-1, 2, -3})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("Y")), (std::vector<float>{-1, 2, -3}));
  const std::string workers = testing::read_bytes(dir / "workers");
  const size_t newline = workers.find('\n');
  EXPECT_EQ(workers.substr(newline + 1), workers.substr(0, newline + 1)) << "a new worker served the next run";
}

TEST(IsolatedEngine, AMissingWorkerProgramIsAnError) {
  EngineEnvironment env;
  env.worker_program = "/nonexistent/reduce";
  auto engine = make_engine("isolated:ref", env);
  ASSERT_TRUE(engine.ok());
  Model m = parse_model(kIdentity);
  auto prepared = (*engine)->prepare(m);
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.error().what.find("cannot start the engine worker"), std::string::npos) << prepared.error().message();
}

}  // namespace
}  // namespace reduce
