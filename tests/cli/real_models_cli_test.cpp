// End to end on real models from npm: `reduce info` on PP-OCRv4 rec; `reduce` on Silero VAD v5,
// whose network sits inside If nodes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "process_support.h"

namespace {

TEST(RealModelCli, InfoOnPpOcrRecReports440NodesAndTheDynamicInput) {
  const char* env = std::getenv("REDUCE_MODEL_CACHE");
  const std::string cache = env ? env : std::string(REDUCE_SOURCE_DIR) + "/.cache/models";
  const std::string cmd = std::string("'") + REDUCE_BINARY_DIR + "/reduce' info '" + cache + "/ppocr_rec.onnx'";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  ASSERT_TRUE(pipe);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe.get())) out.append(buf, n);
  EXPECT_NE(out.find("nodes: 440 "), std::string::npos) << out;
  EXPECT_NE(out.find("  x: float[p2o.DynamicDimension.0,3,48,p2o.DynamicDimension.1]\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  Conv: 38\n"), std::string::npos) << out;
}

// Silero VAD (v5 and legacy) under bf16 with a tight tolerance: their If nodes are replaced by the
// branches taken (rounds of nested Ifs), so the reproducer is a node of the network, with no If
// left, the same for -j 1 and -j 4.
TEST(RealModelCli, SileroReducesInsideItsIfBranchesToANodeOfTheNetwork) {
  const char* env = std::getenv("REDUCE_MODEL_CACHE");
  const std::string cache = env ? env : std::string(REDUCE_SOURCE_DIR) + "/.cache/models";
  const std::vector<std::pair<std::string, std::vector<std::string>>> models = {
      {"silero_vad_v5.onnx", {"--input-shape", "state:2x1x128", "--input-range", "state:0,0"}},
      {"silero_vad_legacy.onnx",
       {"--input-shape", "h:2x1x64", "--input-shape", "c:2x1x64", "--input-range", "h:0,0", "--input-range", "c:0,0"}}};
  for (const auto& [file, state] : models) {
    reduce::testing::TempDir dir;
    std::string first;
    for (const char* jobs : {"1", "4"}) {
      const auto out = dir / (std::string("b") + jobs);
      std::vector<std::string> args = {cache + "/" + file, "--input-shape", "input:1x512", "--input-range", "sr:16000,16000"};
      args.insert(args.end(), state.begin(), state.end());
      for (const char* a : {"--engine", "opt:bf16", "--atol", "1e-4", "--rtol", "1e-4", "-j"}) args.push_back(a);
      args.push_back(jobs);
      args.push_back("-o");
      args.push_back(out.string());
      auto r = reduce::testing::run_reduce(args);
      // BF16 rounding (bf16:ref fails the same way): the bundle is written, exit 8 says so.
      ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 8) << file << r.out << r.err;
      const auto report = nlohmann::json::parse(reduce::testing::read_bytes(out / "report.json"));
      EXPECT_EQ(r.exit_code == 8, report.at("rounding").at("explains_failure").get<bool>()) << file;
      EXPECT_GE(report.at("control_flow").at("inlined_if").get<int>(), 1) << file;
      EXPECT_EQ(report.at("control_flow").at("nodes_in_bodies"), 0) << file;
      EXPECT_FALSE(report.at("reduced").at("op_types").contains("If")) << file;
      EXPECT_GT(report.at("original").at("nodes").get<int>(), 50) << file;  // the flattened network
      EXPECT_TRUE(report.at("one_minimal").get<bool>()) << file;
      const std::string bytes = reduce::testing::read_bytes(out / "model.onnx");
      if (first.empty()) first = bytes;
      EXPECT_EQ(bytes, first) << file << " -j " << jobs;
    }
  }
}

}  // namespace
