// The `cmd:TEMPLATE` engine and `check:` scripts: files in, files out, errors, crashes and timeouts.
#include <gtest/gtest.h>

#include <csignal>

#include "core/tensor_file.h"
#include "adapters/check_script.h"
#include "adapters/engine_spec.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;

const char* kChain = R"(
<ir_version: 8, opset_import: ["" : 15]>
chain (float[2, 3] X, float[3] B) => (float[2, 3] Y)
{
  a = Add(X, B)
  Y = Relu(a)
}
)";

Tensor floats(Shape shape, std::vector<float> v) { return Tensor::from_vector(DType::Float, std::move(shape), v).value(); }

std::vector<float> values(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

TensorMap chain_inputs() { return {{"X", floats({2, 3}, {1, -2, 3, -4, 5, -6})}, {"B", floats({3}, {1, 1, 1})}}; }

// `reduce run` as the external engine: it reads input_K.pb and writes output_K.pb/.npy.
std::string reduce_run_template() {
  return std::string("'") + REDUCE_BINARY_DIR + "/reduce' run {model} --inputs {inputs} --save-outputs {outputs}";
}

Expected<TensorMap> run_cmd(const std::string& command, const Model& model, const TensorMap& inputs,
                            EngineEnvironment env = {}, RunOptions options = {}) {
  REDUCE_ASSIGN(auto engine, make_engine("cmd:" + command, env));
  REDUCE_ASSIGN(auto prepared, engine->prepare(model));
  return prepared->run(inputs, options);
}

TEST(CommandEngine, RunsTheCommandOnFilesAndReadsItsOutputs) {
  Model m = parse_model(kChain);
  auto out = run_cmd(reduce_run_template(), m, chain_inputs());
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("Y")), (std::vector<float>{2, 0, 4, 0, 6, 0}));
}

TEST(CommandEngine, IntermediateValuesBecomeOutputsOfTheModelItRuns) {
  Model m = parse_model(kChain);
  RunOptions options;
  options.outputs = {"a", "Y"};
  auto out = run_cmd(reduce_run_template(), m, chain_inputs(), {}, options);
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("a")), (std::vector<float>{2, -1, 4, -3, 6, -5}));
  EXPECT_EQ(values(out->at("Y")), (std::vector<float>{2, 0, 4, 0, 6, 0}));
}

TEST(CommandEngine, NpyFilesAreMatchedByValueName) {
  testing::TempDir dir;
  ASSERT_TRUE(write_npy(dir / "Y.npy", floats({2, 3}, {6, 5, 4, 3, 2, 1})).ok());
  Model m = parse_model(kChain);
  auto out = run_cmd("cp '" + (dir / "Y.npy").string() + "' {outputs}/", m, chain_inputs());
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("Y")), (std::vector<float>{6, 5, 4, 3, 2, 1}));
}

TEST(CommandEngine, ANonZeroExitIsAnErrorWithTheCommandsMessage) {
  Model m = parse_model(kChain);
  auto out = run_cmd("sh -c 'echo progress; echo \"unsupported op Relu\" >&2; exit 1' {outputs}", m, chain_inputs());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::Error);
  EXPECT_EQ(out.error().what, "progress | unsupported op Relu");
}

TEST(CommandEngine, ACrashingCommandIsACrashWithItsSignal) {
  Model m = parse_model(kChain);
  auto out = run_cmd("sh -c 'kill -SEGV $$' {outputs}", m, chain_inputs());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::Crash);
  EXPECT_EQ(out.error().signal, SIGSEGV);
}

TEST(CommandEngine, AHangingCommandIsKilledAtTheTimeout) {
  Model m = parse_model(kChain);
  EngineEnvironment env;
  env.timeout_seconds = 1;
  const auto start = std::chrono::steady_clock::now();
  auto out = run_cmd("sh -c 'sleep 60' {outputs}", m, chain_inputs(), env);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::Timeout);
  EXPECT_LT(seconds, 30) << "waited for the command instead of killing it";
}

TEST(CommandEngine, MissingOutputsAreNamed) {
  Model m = parse_model(kChain);
  auto none = run_cmd("true {outputs}", m, chain_inputs());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().what.find("the command wrote no outputs"), std::string::npos) << none.error().what;
  RunOptions options;
  options.outputs = {"a", "Y"};
  testing::TempDir dir;
  ASSERT_TRUE(write_npy(dir / "Y.npy", floats({2, 3}, {6, 5, 4, 3, 2, 1})).ok());
  auto partial = run_cmd("cp '" + (dir / "Y.npy").string() + "' {outputs}/", m, chain_inputs(), {}, options);
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.error().what.find("no value for output 'a'"), std::string::npos) << partial.error().what;
}

TEST(CommandEngine, EnvironmentEntriesReachTheCommand) {
  testing::TempDir dir;
  ASSERT_TRUE(write_npy(dir / "Y.npy", floats({1}, {1})).ok());
  EngineEnvironment env;
  env.env = {"REDUCE_TEST_SLOT=7"};
  Model m = parse_model(kChain);
  auto out = run_cmd("sh -c 'test \"$REDUCE_TEST_SLOT\" = 7 && cp \"$1\" \"$2\"' sh '" + (dir / "Y.npy").string() +
                         "' {outputs}",
                     m, chain_inputs(), env);
  EXPECT_TRUE(out.ok()) << out.error().message();
}

TEST(CommandEngine, BadTemplatesAreRejectedWhenTheEngineIsMade) {
  EXPECT_FALSE(make_engine("cmd:run 'unterminated {outputs}").ok());
  auto no_outputs = make_engine("cmd:run {model}");
  ASSERT_FALSE(no_outputs.ok());
  EXPECT_NE(no_outputs.error().what.find("{outputs}, {outputs_npz}, {outputs_json} or {trtexec_output_json}"), std::string::npos);
}

// A stand-in for `polygraphy run {model} --load-inputs {inputs_json} --save-outputs {outputs_json}`
// with the same file contract (not Polygraphy): `reduce run` reads and writes Polygraphy's JSON.
std::string polygraphy_like_template() {
  return std::string("'") + REDUCE_BINARY_DIR +
         "/reduce' run {model} --inputs {inputs_json} --save-format polygraphy --save-outputs {outputs_json}";
}

TEST(CommandEngine, PolygraphyJsonFilesCarryInputsAndOutputsInAStandInWithPolygraphysContract) {
  Model m = parse_model(kChain);
  RunOptions options;
  options.outputs = {"a", "Y"};
  auto out = run_cmd(polygraphy_like_template(), m, chain_inputs(), {}, options);
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("a")), (std::vector<float>{2, -1, 4, -3, 6, -5}));
  EXPECT_EQ(values(out->at("Y")), (std::vector<float>{2, 0, 4, 0, 6, 0}));
}

TEST(CommandEngine, AnOutputMissingFromThePolygraphyOutputsFileIsNamed) {
  Model m = parse_model(kChain);
  // Writes RunResults of a model that has only Y, while the engine asks for `a` too.
  const std::string only_y = std::string("'") + REDUCE_BINARY_DIR +
                             "/reduce' run {model} --inputs {inputs_json} --outputs Y --save-format polygraphy "
                             "--save-outputs {outputs_json}";
  RunOptions options;
  options.outputs = {"a", "Y"};
  auto out = run_cmd(only_y, m, chain_inputs(), {}, options);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message().find("outputs.json: the command wrote no output 'a'"), std::string::npos)
      << out.error().message();
}

TEST(CheckScript, ReceivesTheModelAndInputsAndReportsItsExit) {
  auto script = CheckScript::parse("sh -c 'test -s \"$1\" && test -s \"$2/input_0.pb\" && echo checked; exit 4' sh {model} {inputs}");
  ASSERT_TRUE(script.ok()) << script.error().message();
  Model m = parse_model(kChain);
  auto r = script->run(m, chain_inputs(), {});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->exit_code, 4);
  EXPECT_EQ(r->output, "checked\n");
}

TEST(CheckScript, AModelPathWithSpacesAndShellSyntaxIsPassedIntact) {
  testing::TempDir dir;
  const auto folder = dir / "my models; rm -rf $(echo x) `id` 'q' \"d\" & |";
  std::filesystem::create_directories(folder);
  const auto model = folder / "a b.onnx";
  testing::write_bytes(model, "not really a model");
  auto script = CheckScript::parse("sh -c 'test -f \"$1\" && printf %s \"$1\"' sh {model}");
  ASSERT_TRUE(script.ok());
  auto r = script->run(model, folder, {});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->output, model.string());
}

TEST(CheckScript, AHangingScriptTimesOutAndACrashingOneReportsItsSignal) {
  EngineEnvironment env;
  env.timeout_seconds = 0.5;
  auto hang = CheckScript::parse("sleep 30");
  ASSERT_TRUE(hang.ok());
  auto r = hang->run("m.onnx", "in", env);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  auto crash = CheckScript::parse("sh -c 'kill -ABRT $$'");
  ASSERT_TRUE(crash.ok());
  env.timeout_seconds = 0;  // a loaded machine must not turn the crash into a timeout
  auto c = crash->run("m.onnx", "in", env);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->crash_signal(), SIGABRT);
}

}  // namespace
}  // namespace reduce
