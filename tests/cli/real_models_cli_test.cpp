// End-to-end `reduce info` on a real model from npm (PP-OCRv4 rec).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

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

}  // namespace
