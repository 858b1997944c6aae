// `reduce convert`: an FP32 model to FP16/BF16 at the ONNX level, nodes kept by name or op type; the
// converted model passes `reduce check` against the FP32 values; bad input is exit 2, nothing written.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/model_io.h"
#include "fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::run_reduce;
using testing::TempDir;

TEST(ConvertCli, ConvertsKeepsTheNamedNodesAndTheResultRunsWithinFp16) {
  TempDir dir;
  const std::string model = testing::save_named_model(dir, testing::kSquareOverflow, "norm.onnx");
  const std::string out = (dir / "norm16.onnx").string();
  auto r = run_reduce({"convert", model, "--to", "fp16", "--keep", "square+var", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("converted 7 nodes to fp16, 2 kept by name, 0 float nodes kept in FP32 by rule, 4 Casts", 0), 0u)
      << r.out;
  auto converted = load_model(out);
  ASSERT_TRUE(converted.ok());
  // The kept node reads FP32: its input is cast to float (to = 1) from the converted Sub.
  const Node* square = nullptr;
  const Node* cast = nullptr;
  for (const Node& n : converted->graph.nodes)
    if (n.name == "square") square = &n;
  ASSERT_TRUE(square);
  for (const Node& n : converted->graph.nodes)
    if (n.outputs.at(0) == square->inputs.at(0)) cast = &n;
  ASSERT_TRUE(cast);
  EXPECT_EQ(cast->op_type, "Cast");
  EXPECT_EQ(cast->attribute("to")->i, 1);
  // Small inputs: nothing overflows, and the FP16 model agrees with the FP32 one within FP16's tolerance.
  const std::string fp32_outputs = (dir / "fp32").string();
  ASSERT_EQ(run_reduce({"run", model, "--input-range", "X:-0.01,0.01", "--save-inputs", fp32_outputs,
                        "--save-outputs", fp32_outputs, "--save-format", "pb"})
                .exit_code,
            0);
  auto check = run_reduce({"check", out, "--engine", "ref", "--inputs", fp32_outputs, "--expected", fp32_outputs,
                           "--atol", "0.01", "--rtol", "0.01"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;

  auto by_type = run_reduce({"convert", model, "--to", "bf16", "--keep-op-types", "ReduceMean,Sqrt", "-o", out});
  ASSERT_EQ(by_type.exit_code, 0) << by_type.err;
  EXPECT_EQ(by_type.out.rfind("converted 6 nodes to bf16", 0), 0u) << by_type.out;
}

TEST(ConvertCli, BadInputIsExit2WithOneLineAndNothingWritten) {
  TempDir dir;
  const std::string model = testing::save_named_model(dir, testing::kSquareOverflow, "norm.onnx");
  const std::string out = (dir / "out.onnx").string();
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"convert", model, "--to", "int8", "-o", out}, "error: --to: must be fp16 or bf16, not 'int8'\n"},
      {{"convert", model, "-o", out}, "error: convert: missing --to fp16|bf16\n"},
      {{"convert", model, "--to", "fp16"}, "error: convert: missing -o OUT.onnx\n"},
      {{"convert", model, "--to", "fp16", "--keep", "nope", "-o", out}, ""},
      {{"convert", (dir / "missing.onnx").string(), "--to", "fp16", "-o", out}, ""},
      {{"convert", model, "--to", "fp16", "--data-max", "abc", "-o", out},
       "error: --data-max: must be a positive number, not 'abc'\n"},
      {{"convert", model, "--to", "fp16", "--init-max", "-1", "-o", out},
       "error: --init-max: must be a positive number, not '-1'\n"},
      {{"convert", model, "--to", "fp16", "--data-max", "512", "--inputs", (dir / "none").string(), "-o", out}, ""},
  };
  for (const auto& c : cases) {
    auto r = run_reduce(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    if (!c.err.empty()) {
      EXPECT_EQ(r.err, c.err);
    }
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  auto unknown = run_reduce({"convert", model, "--to", "fp16", "--keep", "nope", "-o", out});
  EXPECT_NE(unknown.err.find("nope"), std::string::npos) << unknown.err;
}

// AutoCast's rule as `reduce convert` applies it (--data-max, --init-max on the reference's values of
// the same seeded inputs) keeps exactly the nodes `reduce precision` reports for the rule.
TEST(ConvertCli, AutocastsRuleKeepsTheNodesPrecisionReportsForIt) {
  TempDir dir;
  const std::string model = testing::save_named_model(dir, testing::kSquareOverflow, "norm.onnx");
  const std::string out = (dir / "rule.onnx").string();
  auto r = run_reduce({"convert", model, "--to", "fp16", "--data-max", "512", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto precision = run_reduce({"precision", model, "--engine", "fp16:ref", "-o", (dir / "set").string()});
  ASSERT_EQ(precision.exit_code, 0) << precision.out << precision.err;
  const auto report = nlohmann::json::parse(testing::read_bytes(dir / "set" / "report.json"));
  std::string expected;
  for (const auto& name : report.at("autocast_rule").at("fp32_nodes")) expected += " " + name.get<std::string>();
  ASSERT_FALSE(expected.empty());
  const size_t count = report.at("autocast_rule").at("fp32_nodes").size();
  EXPECT_NE(r.out.find("AutoCast's rule (data_max 512, init_max 65504, on 1 sample(s)) keeps " + std::to_string(count) +
                       " node(s):" + expected + "\n"),
            std::string::npos)
      << r.out << " vs" << expected;
  ASSERT_TRUE(fs::exists(out));
  // A threshold above every value keeps nothing; the weight threshold keeps the node reading Scale (600).
  auto none = run_reduce({"convert", model, "--to", "fp16", "--data-max", "1e9", "-o", (dir / "none.onnx").string()});
  EXPECT_NE(none.out.find("keeps 0 node(s):\n"), std::string::npos) << none.out;
  auto weights = run_reduce({"convert", model, "--to", "fp16", "--data-max", "1e9", "--init-max", "100", "-o",
                             (dir / "w.onnx").string()});
  EXPECT_NE(weights.out.find("keeps 1 node(s): scaled\n"), std::string::npos) << weights.out;
}

}  // namespace
}  // namespace reduce
