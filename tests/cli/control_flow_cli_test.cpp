// Reducing models with control flow: an If is replaced by the branch the recorded run took, and a
// Loop by the iterations it made, when the failure stays the same, so the reproducer is a node of a
// body (no If or Loop left, 1-minimal, the same for every -j); with --no-inline-if or
// --no-unroll-loops, or an engine that refuses the model without its If, the node stays and its
// bodies are reduced to the nodes the failure needs, 1-minimal over them too.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fault_models.h"
#include "process_support.h"
#include "tsv_rows.h"

namespace reduce {
namespace {

using testing::read_bytes;
using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

std::string save(const TempDir& dir, const char* text) {
  auto m = parse_model_text(text);
  EXPECT_TRUE(m.ok());
  const auto path = dir / "cf.onnx";
  EXPECT_TRUE(save_model(*m, path).ok());
  return path.string();
}

TEST(ControlFlowCli, AnIfIsReplacedByItsTakenBranchAndItsNodesAreReduced) {
  TempDir dir;
  const std::string model = save(dir, testing::kBranchOverflow);
  std::string first;
  for (const char* jobs : {"1", "3"}) {
    const auto out = dir / (std::string("b") + jobs);
    auto r = run_reduce({model, "--engine", "opt:fp16", "-j", jobs, "-o", out.string()});
    ASSERT_EQ(r.exit_code, 8) << r.out << r.err;  // the exact FP16 reference overflows alike: rounding
    EXPECT_NE(r.err.find("control flow: inlined 1 If node(s), 3 nodes out of their taken branches; the same failure"),
              std::string::npos) << r.err;
    const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
    EXPECT_EQ(report.at("control_flow").at("inlined_if"), 1);
    EXPECT_EQ(report.at("control_flow").at("given_nodes"), 4);
    EXPECT_EQ(report.at("control_flow").at("nodes_in_bodies"), 0);
    EXPECT_EQ(report.at("reduced").at("nodes"), 1);
    EXPECT_FALSE(report.at("reduced").at("op_types").contains("If"));
    EXPECT_TRUE(report.at("one_minimal").get<bool>());
    EXPECT_NE(read_bytes(out / "report.md").find("**Control flow:**"), std::string::npos);
    const std::string bytes = read_bytes(out / "model.onnx");
    if (first.empty()) first = bytes;
    EXPECT_EQ(bytes, first) << "-j " << jobs;
    // The reproducer fails on its own.
    auto check = run_reduce({"check", (out / "model.onnx").string(), "--engine", "opt:fp16", "--inputs",
                             (out / "inputs").string()});
    EXPECT_EQ(check.exit_code, 1) << check.out;
  }
}

// The overflow needs the taken branch's Mul and Exp; its Add and the other branch's Neg go (their
// values replaced by inputs of the same type).
TEST(ControlFlowCli, WithNoInlineIfTheIfStaysWithTheBodyNodesTheFailureNeeds) {
  TempDir dir;
  const std::string model = save(dir, testing::kBranchOverflow);
  const auto out = dir / "kept";
  auto r = run_reduce({model, "--engine", "opt:fp16", "--no-inline-if", "-j", "1", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
  EXPECT_EQ(report.at("control_flow").at("inlined_if"), 0);
  EXPECT_EQ(report.at("reduced").at("op_types"), nlohmann::json({{"If", 1}}));
  EXPECT_EQ(report.at("control_flow").at("nodes_in_bodies"), 2);
  EXPECT_EQ(report.at("control_flow").at("body_nodes_removed"), 2);
  EXPECT_TRUE(report.at("one_minimal").get<bool>());
  EXPECT_NE(r.err.find("and 2 nodes in bodies in"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(1-minimal)"), std::string::npos) << r.err;
  EXPECT_NE(read_bytes(out / "report.md").find("**Bodies:** 2 nodes remain inside subgraph bodies"), std::string::npos);
  auto m = load_model(out / "model.onnx");
  ASSERT_TRUE(m.ok()) << m.error().message();
  ASSERT_EQ(m->graph.nodes.size(), 1u);
  const Graph& then_branch = *m->graph.nodes[0].attribute("then_branch")->g;
  ASSERT_EQ(then_branch.nodes.size(), 2u);
  EXPECT_EQ(then_branch.nodes[0].op_type, "Mul");
  EXPECT_EQ(then_branch.nodes[1].op_type, "Exp");
  // The else branch returns x: through an Identity, as ONNX Runtime requires of an outer value.
  const Graph& else_branch = *m->graph.nodes[0].attribute("else_branch")->g;
  ASSERT_EQ(else_branch.nodes.size(), 1u);
  EXPECT_EQ(else_branch.nodes[0].op_type, "Identity");
}

// An engine that refuses an Erf inside an If (a check: script on the model file): without the If
// the model passes, so the If stays; of its eleven body nodes, the reproducer keeps the Erf alone,
// 1-minimal over every node, the same for every -j, and it fails on its own.
constexpr const char* kErfInBranch = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] y)
<float zero = {0.0}>
{
  ax = Abs(x)
  s = ReduceSum <keepdims = 0> (ax)
  c = Greater(s, zero)
  y = If (c) <
    then_branch = t () => (float[2, 4] a) {
      a1 = Relu(x)  a2 = Neg(a1)  a3 = Sigmoid(a2)  a4 = Erf(a3)  a5 = Tanh(a4)  a6 = Abs(a5)  a7 = Sin(a6)  a = Cos(a7)
    },
    else_branch = f () => (float[2, 4] b) { b1 = Neg(x)  b2 = Cos(b1)  b = Sqrt(b2) }
  >
}
)";

TEST(ControlFlowCli, AnIfTheEngineNeedsKeepsOnlyTheBodyNodeOfTheFailure) {
  TempDir dir;
  const std::string model = save(dir, kErfInBranch);
  write_bytes(dir / "erf_in_if.sh", "#!/bin/sh\nif grep -aq Erf \"$1\" && grep -aq If \"$1\"; then "
                                    "echo 'engine: Erf inside a subgraph is not supported'; exit 1; fi\nexit 0\n");
  const std::string engine = "check:sh " + (dir / "erf_in_if.sh").string() + " {model}";
  std::string first;
  for (const char* jobs : {"1", "3"}) {
    const auto out = dir / (std::string("b") + jobs);
    auto r = run_reduce({model, "--engine", engine, "-j", jobs, "-o", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.err.find("control flow: kept 1 If node(s): with them replaced the model passes"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("reduced to 1 nodes and 1 nodes in bodies in"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(1-minimal)"), std::string::npos) << r.err;
    const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
    EXPECT_EQ(report.at("reduced").at("op_types"), nlohmann::json({{"If", 1}}));
    EXPECT_EQ(report.at("control_flow").at("nodes_in_bodies"), 1);
    EXPECT_EQ(report.at("control_flow").at("body_nodes_removed"), 10);
    EXPECT_TRUE(report.at("one_minimal").get<bool>());
    auto m = load_model(out / "model.onnx");
    ASSERT_TRUE(m.ok()) << m.error().message();
    const Graph& then_branch = *m->graph.nodes.at(0).attribute("then_branch")->g;
    ASSERT_EQ(then_branch.nodes.size(), 1u);
    EXPECT_EQ(then_branch.nodes[0].op_type, "Erf");
    const std::string bytes = read_bytes(out / "model.onnx");
    if (first.empty()) first = bytes;
    EXPECT_EQ(bytes, first) << "-j " << jobs;
    auto check = run_reduce({"check", (out / "model.onnx").string(), "--engine", engine, "--inputs", (out / "inputs").string()});
    EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  }
}

// The corpus with its whole network inside an If (`reduce-corpus --in-if`) or a Loop body run three
// times (`--in-loop`), every fault family (the optimized engine's passes fire inside bodies): the
// reduction reaches the family's ground-truth reproducer, nodes of a body, with no control-flow
// node left, 1-minimal.
class WrappedCorpus : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(WrappedCorpus, EveryFamilyReducesToItsGroundTruth) {
  const auto& [wrap, size] = GetParam();
  TempDir dir;
  auto gen = testing::run_process(
      {std::string(REDUCE_BINARY_DIR) + "/reduce-corpus", dir.path().string(), "--sizes", size, "--in-" + wrap});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const auto rows = testing::read_tsv(dir / "manifest.tsv").rows;
  ASSERT_GE(rows.size(), 8u);
  for (const auto& row : rows) {
    ASSERT_GE(row.size(), 5u);
    const std::string& file = row[0];
    EXPECT_NE(file.find("_" + wrap + "_" + size + ".onnx"), std::string::npos) << file;
    EXPECT_EQ(row[4], wrap == "if" ? "4" : "1") << file;  // top-level nodes: the network is inside
    const auto out = dir / ("b-" + file);
    auto r = run_reduce({(dir / file).string(), "--engine", row[1], "-j", "2", "-o", out.string()});
    ASSERT_TRUE(testing::bundle_written(r)) << file << r.out << r.err;
    const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
    const auto& cf = report.at("control_flow");
    EXPECT_EQ(cf.at(wrap == "if" ? "inlined_if" : "unrolled_loops"), 1) << file;
    if (wrap == "loop") {
      EXPECT_EQ(cf.at("unrolled_iterations"), 3) << file;
    }
    EXPECT_EQ(cf.at("nodes_in_bodies"), 0) << file;
    std::string ops;
    for (const auto& [op, n] : report.at("reduced").at("op_types").items())
      ops += (ops.empty() ? "" : ",") + op + ":" + std::to_string(n.get<int>());
    EXPECT_EQ(ops, row[3]) << file;
    EXPECT_TRUE(report.at("one_minimal").get<bool>()) << file;
  }
}

INSTANTIATE_TEST_SUITE_P(IfAndLoop, WrappedCorpus,
                         ::testing::Combine(::testing::Values("if", "loop"), ::testing::Values("10", "100", "1000")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

// The network inside a Loop: unrolled, its iterations are reduced to the overflowing node of one
// of them, the same for every -j; with --no-unroll-loops the Loop stays with the body nodes it needs.
constexpr const char* kLoopOverflow = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] y, float[3, 2, 4] s)
<float big = {20.0}, int64 trips = {3}>
{
  go = Constant <value = bool {1}> ()
  y, s = Loop (trips, go, x) <
    body = b (int64 i, bool c, float[2, 4] v) => (bool c2, float[2, 4] v2, float[2, 4] e) {
      c2 = Identity(c)
      v2 = Neg(v)
      u = Mul(x, big)
      e = Exp(u)
    }
  >
}
)";

TEST(ControlFlowCli, ALoopIsReplacedByItsIterationsAndTheirNodesAreReduced) {
  TempDir dir;
  const std::string model = save(dir, kLoopOverflow);
  std::string first;
  for (const char* jobs : {"1", "4"}) {
    const auto out = dir / (std::string("b") + jobs);
    auto r = run_reduce({model, "--engine", "opt:fp16", "-j", jobs, "-o", out.string()});
    ASSERT_EQ(r.exit_code, 8) << r.out << r.err;  // the exact FP16 reference overflows alike: rounding
    EXPECT_NE(r.err.find("control flow: unrolled 1 Loop/Scan node(s) into their 3 iterations"), std::string::npos) << r.err;
    const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
    EXPECT_EQ(report.at("control_flow").at("unrolled_loops"), 1);
    EXPECT_EQ(report.at("control_flow").at("unrolled_iterations"), 3);
    EXPECT_EQ(report.at("control_flow").at("nodes_in_bodies"), 0);
    EXPECT_EQ(report.at("reduced").at("op_types"), nlohmann::json({{"Exp", 1}}));
    EXPECT_TRUE(report.at("one_minimal").get<bool>());
    EXPECT_NE(read_bytes(out / "report.md").find("Loop/Scan node(s) by the 3 iterations"), std::string::npos);
    const std::string bytes = read_bytes(out / "model.onnx");
    if (first.empty()) first = bytes;
    EXPECT_EQ(bytes, first) << "-j " << jobs;
  }
  const auto kept = dir / "kept";
  auto r = run_reduce({model, "--engine", "opt:fp16", "--no-unroll-loops", "-j", "1", "-o", kept.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = nlohmann::json::parse(read_bytes(kept / "report.json"));
  EXPECT_EQ(report.at("control_flow").at("unrolled_loops"), 0);
  EXPECT_EQ(report.at("reduced").at("op_types"), nlohmann::json({{"Loop", 1}}));
  EXPECT_EQ(report.at("control_flow").at("nodes_in_bodies"), 2);  // Mul and Exp: Identity and Neg go
  EXPECT_TRUE(report.at("one_minimal").get<bool>());
}

// A Scan over the rows of x whose body overflows FP16: unrolled into its three iterations (a
// Gather of each row), reduced to the overflowing Exp of one of them.
constexpr const char* kScanOverflow = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] s0, float[3, 2, 4] x) => (float[2, 4] s, float[3, 2, 4] e)
<float big = {20.0}>
{
  s, e = Scan <num_scan_inputs = 1,
    body = b (float[2, 4] st, float[2, 4] row) => (float[2, 4] st2, float[2, 4] ex) {
      st2 = Add(st, row)
      u = Mul(row, big)
      ex = Exp(u)
    }
  > (s0, x)
}
)";

TEST(ControlFlowCli, AScanIsReplacedByItsIterationsAndTheirNodesAreReduced) {
  TempDir dir;
  const std::string model = save(dir, kScanOverflow);
  const auto out = dir / "b";
  auto r = run_reduce({model, "--engine", "opt:fp16", "-j", "2", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 8) << r.out << r.err;  // FP16 rounding
  EXPECT_NE(r.err.find("control flow: unrolled 1 Loop/Scan node(s) into their 3 iterations"), std::string::npos) << r.err;
  const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
  EXPECT_EQ(report.at("control_flow").at("unrolled_loops"), 1);
  EXPECT_EQ(report.at("control_flow").at("unrolled_iterations"), 3);
  EXPECT_EQ(report.at("reduced").at("op_types"), nlohmann::json({{"Exp", 1}}));
  EXPECT_TRUE(report.at("one_minimal").get<bool>());
}

// A Loop that runs 5 times: unrolled it would add more nodes than --max-unrolled-nodes 20, so it
// stays, the log says why, and its body is reduced; a budget out of range is a usage error.
constexpr const char* kLongLoop = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] y)
<float big = {20.0}, int64 trips = {5}>
{
  go = Constant <value = bool {1}> ()
  y = Loop (trips, go, x) <
    body = b (int64 i, bool c, float[2, 4] v) => (bool c2, float[2, 4] v2) {
      c2 = Identity(c)
      u = Mul(x, big)
      v2 = Exp(u)
    }
  >
}
)";

TEST(ControlFlowCli, ALoopBeyondTheUnrollingBudgetStaysAndTheLogSaysWhy) {
  TempDir dir;
  const std::string model = save(dir, kLongLoop);
  const auto out = dir / "b";
  auto r = run_reduce({model, "--engine", "opt:fp16", "--max-unrolled-nodes", "20", "-j", "1", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("control flow: kept Loop y: 5 iterations of 3 nodes exceed the unrolling budget of 20 nodes"),
            std::string::npos) << r.err;
  const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
  EXPECT_EQ(report.at("control_flow").at("unrolled_loops"), 0);
  EXPECT_EQ(report.at("reduced").at("op_types"), nlohmann::json({{"Loop", 1}}));
  EXPECT_EQ(report.at("control_flow").at("nodes_in_bodies"), 2);  // Mul and Exp: the Identity goes
  EXPECT_TRUE(report.at("one_minimal").get<bool>());
  // Unrolled with the default budget.
  auto unrolled = run_reduce({model, "--engine", "opt:fp16", "-j", "1", "-o", (dir / "u").string()});
  ASSERT_EQ(unrolled.exit_code, 8) << unrolled.err;  // FP16 rounding
  EXPECT_EQ(nlohmann::json::parse(read_bytes(dir / "u" / "report.json")).at("control_flow").at("unrolled_iterations"), 5);
  for (const char* bad : {"0", "10000001"}) {
    auto refused = run_reduce({model, "--max-unrolled-nodes", bad, "-o", (dir / "x").string()});
    EXPECT_EQ(refused.exit_code, 2) << bad;
    EXPECT_NE(refused.err.find("error: --max-unrolled-nodes: " + std::string(bad) + " is outside 1..10000000"), std::string::npos)
        << refused.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "x"));
  }
}

}  // namespace
}  // namespace reduce
