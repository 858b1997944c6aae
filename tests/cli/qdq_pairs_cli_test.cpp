// `reduce MODEL.onnx` on Q/DQ models: the reproducer never holds a QuantizeLinear without the
// DequantizeLinear nodes it feeds, for every -j, whether the failure is downstream or in the quantization.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/model_io.h"
#include "process_support.h"

namespace reduce {
namespace {

using testing::read_bytes;
using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

// broadcast-batch1 fires on the Add of two dequantized values: the failure is downstream of the pairs.
const char* kDownstream = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3,2,4] X, float[1,1,2,4] B) => (float[1,3,2,4] Y)
<float s = {0.05}, int8 z = {0}>
{
  a = Relu(X)
  qa = QuantizeLinear(a, s, z)
  da = DequantizeLinear(qa, s, z)
  qb = QuantizeLinear(B, s, z)
  db = DequantizeLinear(qb, s, z)
  m = Add(da, db)
  Y = Tanh(m)
}
)";

// quantize-half-away fires in qa: Floor(2X)/2 puts half of the values on ties of x / 1.0. qa feeds
// two DequantizeLinear nodes.
const char* kInTheQuantization = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[8] X) => (float[8] Y)
<float two = {2.0}, float half = {0.5}, float s = {1.0}, int8 z = {0}>
{
  d = Mul(X, two)
  f = Floor(d)
  a = Mul(f, half)
  qa = QuantizeLinear(a, s, z)
  da = DequantizeLinear(qa, s, z)
  db = DequantizeLinear(qa, s, z)
  m = Add(da, db)
  Y = Relu(m)
}
)";

// Every QuantizeLinear of the model feeds DequantizeLinear nodes only, and is not an output.
void expect_no_lone_quantize(const std::filesystem::path& model_path) {
  auto m = load_model(model_path.string());
  ASSERT_TRUE(m.ok()) << m.error().message();
  for (const Node& q : m->graph.nodes) {
    if (q.op_type != "QuantizeLinear") continue;
    size_t dequantizers = 0;
    for (const Node& n : m->graph.nodes)
      for (const auto& in : n.inputs)
        if (in == q.outputs[0]) {
          EXPECT_EQ(n.op_type, "DequantizeLinear") << q.outputs[0] << " is read by " << n.op_type;
          ++dequantizers;
        }
    EXPECT_GT(dequantizers, 0u) << q.outputs[0] << " is a lone QuantizeLinear";
    for (const auto& o : m->graph.outputs) EXPECT_NE(o.name, q.outputs[0]);
  }
}

// Reduces at -j 1 and -j 4; returns report.json of the first, after checking both bundles hold the same model.
std::string reduce_at_one_and_four(const TempDir& dir, const std::string& text, const std::vector<std::string>& options) {
  write_bytes(dir / "m.onnxtxt", text);
  std::string first, report;
  for (const char* jobs : {"1", "4"}) {
    const auto out = dir / (std::string("out") + jobs);
    std::vector<std::string> args{(dir / "m.onnxtxt").string()};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"-j", jobs, "-o", out.string()});
    auto r = run_reduce(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    expect_no_lone_quantize(out / "model.onnx");
    const std::string bytes = read_bytes(out / "model.onnx");
    if (first.empty()) first = bytes, report = read_bytes(out / "report.json");
    EXPECT_EQ(bytes, first) << "-j " << jobs;
  }
  return report;
}

TEST(QdqReduceCli, AFailureDownstreamOfThePairsLeavesNoLoneQuantizeForEveryJobCount) {
  TempDir dir;
  const std::string report = reduce_at_one_and_four(dir, kDownstream, {"--engine", "opt:fault=broadcast-batch1"});
  EXPECT_NE(report.find("\"Add\": 1"), std::string::npos) << report;
  EXPECT_NE(report.find("\"one_minimal\": true"), std::string::npos) << report;
}

TEST(QdqReduceCli, AFailureInTheQuantizationReducesToTheQuantizeWithItsDequantizers) {
  TempDir dir;
  const std::string report =
      reduce_at_one_and_four(dir, kInTheQuantization, {"--engine", "opt:fault=quantize-half-away", "--input-range", "X:-4,4"});
  EXPECT_NE(report.find("\"QuantizeLinear\": 1"), std::string::npos) << report;
  EXPECT_NE(report.find("\"DequantizeLinear\": 2"), std::string::npos) << report;
  EXPECT_EQ(report.find("\"Add\""), std::string::npos) << report;
  EXPECT_NE(report.find("\"one_minimal\": true"), std::string::npos) << report;
  // 1-minimal as the search knows it: the DequantizeLinear nodes go only with their QuantizeLinear.
  const std::string md = read_bytes(dir / "out1" / "report.md");
  EXPECT_NE(md.find("1-minimal (removing any single node, a DequantizeLinear with its QuantizeLinear,"), std::string::npos) << md;
}

}  // namespace
}  // namespace reduce
