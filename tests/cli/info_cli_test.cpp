// End-to-end: the `reduce` executable's subcommand dispatch and `reduce info`, good and bad input.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "adapters/engine_spec.h"
#include "core/model_io.h"
#include "core/tensor_file.h"
#include "process_support.h"

namespace reduce {
namespace {

using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

using CliRun = testing::ProcessRun;
using testing::run_reduce;

// The one-line error form: `error: <file>: <problem>`.
void expect_one_line_error(const CliRun& r, const std::string& file) {
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: " + file + ": ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

const std::string kExample = std::string(REDUCE_SOURCE_DIR) + "/corpus/examples/tiny_attention.onnx";

TEST(Cli, HelpListsCommandsAndExitsZero) {
  CliRun r = run_reduce({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("info"), std::string::npos);
  EXPECT_EQ(run_reduce({"info", "--help"}).exit_code, 0);
}

// Every command that takes --engine names every kind of engines.def in its help: the list comes
// from the registry (engine_kinds_usage), so a new kind cannot be missing from one of them.
TEST(Cli, EveryCommandTakingAnEngineNamesEveryKindInItsHelp) {
  const std::vector<std::vector<std::string>> helps = {{kExample, "--help"}, {"check", "--help"}, {"compare", "--help"},
                                                       {"precision", "--help"}, {"run", "--help"},
                                                       {"conformance", "--help"}, {"batch", "--help"}};
  for (const auto& argv : helps) {
    const CliRun r = run_reduce(argv);
    EXPECT_EQ(r.exit_code, 0) << argv[0] << r.err;
    for (const auto& kind : engine_kinds())
      EXPECT_NE(r.out.find(std::string(kind.usage)), std::string::npos) << argv[0] << " --help lacks " << kind.usage;
  }
}

TEST(Cli, BadUsageExitsTwo) {
  EXPECT_EQ(run_reduce({}).exit_code, 2);
  EXPECT_EQ(run_reduce({"no-such-command"}).exit_code, 2);
  EXPECT_EQ(run_reduce({"info"}).exit_code, 2);
  EXPECT_EQ(run_reduce({"info", "--no-such-flag", kExample}).exit_code, 2);
}

TEST(Cli, InfoPrintsOpsetsNodesOpsInputsOutputsAndWeights) {
  CliRun r = run_reduce({"info", kExample});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("opset imports: ai.onnx=13"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nodes: 18 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  MatMul: 5\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  x: float[1,3,4]\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  y: float[1,3,4]\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("initializers: 8 (236 bytes)"), std::string::npos) << r.out;
}

TEST(Cli, BundledExampleMatchesItsTextSource) {
  auto binary = load_model(kExample);
  auto text = load_model(std::string(REDUCE_SOURCE_DIR) + "/corpus/examples/tiny_attention.onnxtxt");
  ASSERT_TRUE(binary.ok() && text.ok());
  EXPECT_EQ(first_difference(*binary, *text), std::nullopt);
}

// Saves the bundled example with its larger weights in `data_file` next to it.
void save_example_with_external_weights(const std::filesystem::path& path, const std::string& data_file) {
  auto m = load_model(kExample);
  ASSERT_TRUE(m.ok());
  SaveOptions opts;
  opts.weights = SaveOptions::Weights::External;
  opts.external_threshold = 64;
  opts.external_file = data_file;
  ASSERT_TRUE(save_model(*m, path, opts).ok());
}

TEST(Cli, InfoListsExternalDataFiles) {
  TempDir dir;
  save_example_with_external_weights(dir / "ext.onnx", "ext.data");
  CliRun r = run_reduce({"info", (dir / "ext.onnx").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("external data files:\n  ext.data\n"), std::string::npos) << r.out;
}

TEST(Cli, InfoOnTruncatedModelIsAOneLineError) {
  TempDir dir;
  const std::string bytes = read_bytes(kExample);
  write_bytes(dir / "cut.onnx", bytes.substr(0, bytes.size() / 2));
  expect_one_line_error(run_reduce({"info", (dir / "cut.onnx").string()}), (dir / "cut.onnx").string());
}

TEST(Cli, InfoOnRandomBytesIsAOneLineError) {
  TempDir dir;
  std::string junk(1000, '\0');
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>((i * 7919u) ^ (i >> 3));
  write_bytes(dir / "junk.onnx", junk);
  expect_one_line_error(run_reduce({"info", (dir / "junk.onnx").string()}), (dir / "junk.onnx").string());
}

TEST(Cli, InfoOnMissingFileIsAOneLineError) {
  TempDir dir;
  expect_one_line_error(run_reduce({"info", (dir / "absent.onnx").string()}), (dir / "absent.onnx").string());
}

TEST(Cli, InfoOnModelWithEscapingOrMissingExternalDataIsAOneLineError) {
  TempDir dir;
  save_example_with_external_weights(dir / "m.onnx", "abcdefgh.bin");
  // Point the (same-length) location outside the folder.
  std::string bytes = read_bytes(dir / "m.onnx");
  for (size_t pos = bytes.find("abcdefgh.bin"); pos != std::string::npos; pos = bytes.find("abcdefgh.bin"))
    bytes.replace(pos, 12, "../../etc/pw");
  write_bytes(dir / "escape.onnx", bytes);
  CliRun escape = run_reduce({"info", (dir / "escape.onnx").string()});
  expect_one_line_error(escape, (dir / "escape.onnx").string());
  EXPECT_NE(escape.err.find("escapes the model's folder"), std::string::npos) << escape.err;

  std::filesystem::remove(dir / "abcdefgh.bin");
  CliRun missing = run_reduce({"info", (dir / "m.onnx").string()});
  expect_one_line_error(missing, (dir / "m.onnx").string());
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
}

TEST(Cli, InfoOnTensorPbPrintsTypeShapeAndStatistics) {
  TempDir dir;
  auto t = Tensor::from_vector(DType::Float, {2, 2}, std::vector<float>{1, 2, 3, 4});
  ASSERT_TRUE(write_tensor_pb(dir / "input_0.pb", "x", *t).ok());
  CliRun r = run_reduce({"info", (dir / "input_0.pb").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "x: float[2,2]  elements=4  min=1 max=4 mean=2.5\n");
}

TEST(Cli, InfoOnTensorPbWithWrongByteSizeIsAOneLineError) {
  TempDir dir;
  auto t = Tensor::from_vector(DType::Float, {4}, std::vector<float>{1, 2, 3, 4});
  ASSERT_TRUE(write_tensor_pb(dir / "t.pb", "x", *t).ok());
  // The dims field (tag 0x08, value 4) comes first: claim 5 elements for 16 bytes of data.
  std::string bytes = read_bytes(dir / "t.pb");
  ASSERT_EQ(bytes.substr(0, 2), std::string("\x08\x04", 2));
  bytes[1] = '\x05';
  write_bytes(dir / "t.pb", bytes);
  expect_one_line_error(run_reduce({"info", (dir / "t.pb").string()}), (dir / "t.pb").string());
}

}  // namespace
}  // namespace reduce
