// Per-node precision: `fp32=NODE+NODE|@FILE` in engine specs, the optimized engine's FP32 nodes
// and the conversions at their boundaries, and {fp32_nodes}/{fp32_nodes_file} in templates.
#include <cmath>

#include "cli/fault_models.h"
#include "corpus_model.h"
#include "adapters/check_script.h"
#include "optimized_support.h"

namespace reduce {
namespace {

using testing::floats;
using testing::kSquareNorm;
using testing::parse_model;
using testing::run_spec;
using testing::TempDir;
using testing::values;
using testing::write_bytes;

// The model of `text` with every node named after its first output (the text format names none).
Model named(const char* text) {
  Model m = parse_model(text);
  for (Node& n : m.graph.nodes) n.name = n.outputs.at(0);
  return m;
}

TEST(Fp32Nodes, InlineNamesAreSplitOnPlusAndDecoded) {
  auto nodes = parse_fp32_nodes("sq+/blocks.0/Add%2B1+sq");
  ASSERT_TRUE(nodes.ok()) << nodes.error().message();
  EXPECT_EQ(nodes->names, (std::vector<std::string>{"sq", "/blocks.0/Add+1"}));
  EXPECT_EQ(to_string(*nodes), "sq+/blocks.0/Add%2B1");
  auto back = parse_fp32_nodes(to_string(Fp32Nodes{{"a,b", "@c", "50%"}, ""}));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->names, (std::vector<std::string>{"a,b", "@c", "50%"}));
}

TEST(Fp32Nodes, AFileHoldsOneNamePerLine) {
  TempDir dir;
  write_bytes(dir / "pins.txt", "sq\r\n\n  var  \nsq\n");
  auto nodes = parse_fp32_nodes("@" + (dir / "pins.txt").string());
  ASSERT_TRUE(nodes.ok()) << nodes.error().message();
  EXPECT_EQ(nodes->names, (std::vector<std::string>{"sq", "var"}));
  EXPECT_EQ(nodes->file, (dir / "pins.txt").string());
}

TEST(Fp32Nodes, EmptyListsEmptyFilesAndMissingFilesAreOneLineErrorsNamingTheFile) {
  TempDir dir;
  write_bytes(dir / "empty.txt", "\n  \n");
  const std::string empty = (dir / "empty.txt").string(), missing = (dir / "missing.txt").string();
  auto e = parse_fp32_nodes("@" + empty);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().where, empty);
  auto m = parse_fp32_nodes("@" + missing);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().where, missing);
  EXPECT_FALSE(parse_fp32_nodes("").ok());
  EXPECT_FALSE(parse_fp32_nodes("a++b").ok());
  for (const auto& err : {e.error().message(), m.error().message()}) EXPECT_EQ(err.find('\n'), std::string::npos);
  // Through a spec, the file stays the subject of the error.
  auto spec = parse_engine_spec("opt:fp16,fp32=@" + empty);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().where, empty);
}

TEST(Fp32Nodes, UnknownNamesAreErrorsNamingTheNode) {
  Model m = named(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] X) => (float[2] Y)
{
  Y = Relu (X)
}
)");
  EXPECT_TRUE(check_fp32_nodes(Fp32Nodes{{"Y"}, ""}, m.graph).ok());
  Status s = check_fp32_nodes(Fp32Nodes{{"Y", "nope"}, "pins.txt"}, m.graph);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().where, "pins.txt");
  EXPECT_NE(s.error().what.find("'nope'"), std::string::npos);
}

TEST(Fp32NodesSpec, OptAndCmdSpecsCarryTheSetAndPrintItBack) {
  auto opt = parse_engine_spec("opt:fp16,fp32=sq+var,fault=broadcast-batch1");
  ASSERT_TRUE(opt.ok()) << opt.error().message();
  EXPECT_EQ(opt->fp32().names, (std::vector<std::string>{"sq", "var"}));
  EXPECT_EQ(to_string(*opt), "opt:fp16,fp32=sq+var,fault=broadcast-batch1");
  EXPECT_TRUE(opt->controls_precision());
  auto bf16 = parse_engine_spec("opt:bf16,fp32=sq");
  ASSERT_TRUE(bf16.ok());
  EXPECT_EQ(bf16->fp32().names, (std::vector<std::string>{"sq"}));

  auto cmd = parse_engine_spec("isolated:cmd[fp32=a+b]:trt {model} {fp32_nodes} {outputs}");
  ASSERT_TRUE(cmd.ok()) << cmd.error().message();
  EXPECT_EQ(cmd->fp32().names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(cmd->innermost().command, "trt {model} {fp32_nodes} {outputs}");
  EXPECT_EQ(to_string(*cmd), "isolated:cmd[fp32=a+b]:trt {model} {fp32_nodes} {outputs}");
  EXPECT_TRUE(cmd->controls_precision());
  EXPECT_FALSE(parse_engine_spec("cmd:trt {model} {outputs}")->controls_precision());
  EXPECT_FALSE(parse_engine_spec("cmd[fp16]:x {outputs}").ok());
  EXPECT_FALSE(parse_engine_spec("ref[fp32=a]:").ok());
}

TEST(Fp32NodesSpec, WithFp32NodesSetsTheSetOfEveryEngineThatTakesOne) {
  const Fp32Nodes nodes{{"n1"}, ""};
  auto opt = with_fp32_nodes(*parse_engine_spec("opt:fp16"), nodes);
  ASSERT_TRUE(opt.ok());
  EXPECT_EQ(to_string(*opt), "opt:fp16,fp32=n1");
  auto iso = with_fp32_nodes(*parse_engine_spec("isolated:cmd:x {outputs}"), nodes);
  ASSERT_TRUE(iso.ok());
  EXPECT_EQ(to_string(*iso), "isolated:cmd[fp32=n1]:x {outputs}");
  EXPECT_FALSE(with_fp32_nodes(*parse_engine_spec("ref"), nodes).ok());
}


TEST(OptimizedFp32Nodes, PinnedNodesComputeAndStoreInFp32) {
  Model m = named(kSquareNorm);
  const TensorMap in = {{"X", floats({1, 8}, {1, -0.5f, 0.25f, 0.75f, 0.5f, -1, 0.125f, 0.3f})}};
  const std::vector<float> ref = values(run_spec("ref", m, in).at("Y"));
  EXPECT_EQ(values(run_spec("opt:fp16", m, in).at("Y")), std::vector<float>(8, 0.0f));
  const std::vector<float> pinned = values(run_spec("opt:fp16,fp32=sq+var+std", m, in).at("Y"));
  for (size_t k = 0; k < ref.size(); ++k) EXPECT_NEAR(pinned[k], ref[k], 1e-3) << k;
}

TEST(OptimizedFp32Nodes, AReducedPrecisionReaderOfAPinnedValueGetsItRounded) {
  Model m = named(kSquareNorm);
  const TensorMap in = {{"X", floats({1, 8}, {1, -0.5f, 0.25f, 0.75f, 0.5f, -1, 0.125f, 0.3f})}};
  // The sq is exact in FP32, but the (fp16) var reads it converted to fp16: inf again.
  EXPECT_EQ(values(run_spec("opt:fp16,fp32=sq", m, in).at("Y")), std::vector<float>(8, 0.0f));
  RunOptions both;
  both.outputs = {"sq", "Y"};
  const TensorMap out = run_spec("opt:fp16,fp32=sq", m, in, both);
  EXPECT_EQ(values(out.at("sq"))[0], 360000.0f);  // stored in FP32
}

TEST(OptimizedFp32Nodes, ConversionsRoundAtTheBoundaryAndPinnedNodesReadUnroundedInputsAndWeights) {
  // 1 + 2^-12 is not an fp16 value (fp16 has 10 fraction bits): fp16 storage makes it 1.
  Model m = named(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1] X) => (float[1] P, float[1] C, float[1] D)
<float W = {1.000244140625}>
{
  P = Mul (X, W)
  C = Identity (P)
  D = Mul (C, W)
}
)");
  const float x = 1.000244140625f;
  const TensorMap in = {{"X", floats({1}, {x})}};
  const TensorMap half = run_spec("opt:fp16", m, in);
  EXPECT_EQ(values(half.at("P"))[0], 1.0f);
  const TensorMap mixed = run_spec("opt:fp16,fp32=P+D", m, in);
  EXPECT_EQ(values(mixed.at("P"))[0], x * x);  // FP32 input, FP32 weight, FP32 storage
  EXPECT_EQ(values(mixed.at("C"))[0], 1.0f);   // the fp16 reader gets P rounded
  EXPECT_EQ(values(mixed.at("D"))[0], x);      // a pinned reader gets C widened, the weight unrounded
  const OptimizationReport plain = testing::report_of("opt:fp16", m);
  const OptimizationReport report = testing::report_of("opt:fp16,fp32=P+D", m);
  EXPECT_EQ(report.nodes_after, plain.nodes_after + 1);  // one ToReducedPrecision in front of `reader`
}

TEST(OptimizedFp32Nodes, AFusedKernelContainingAPinnedNodeRunsInFp32) {
  // MatMul + Add fuse into one Gemm (pass matmul-add-gemm); pinning the Add pins the fused kernel.
  Model m = named(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2] X) => (float[1, 2] Y)
<float[2, 2] W = {1.0, 0.0, 0.0, 1.0}, float[2] B = {0.000244140625, 0.0}>
{
  h = MatMul (X, W)
  Y = Add (h, B)
}
)");
  ASSERT_EQ(testing::report_of("opt:fp16,fp32=Y", m).fired("matmul-add-gemm"), 1);
  const TensorMap in = {{"X", floats({1, 2}, {1, 1})}};
  EXPECT_EQ(values(run_spec("opt:fp16", m, in).at("Y"))[0], 1.0f);
  EXPECT_EQ(values(run_spec("opt:fp16,fp32=Y", m, in).at("Y"))[0], 1.000244140625f);
}

TEST(OptimizedFp32Nodes, APinnedCastHasNoPrecisionConflict) {
  Model m = named(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] X) => (float[2] Y)
{
  Y = Cast <to = 1> (X)
}
)");
  auto fails = make_engine("opt:fp16,fault=cast-fp16-conflict");
  ASSERT_TRUE(fails.ok());
  EXPECT_FALSE((*fails)->prepare(m).ok());
  auto pinned = make_engine("opt:fp16,fp32=Y,fault=cast-fp16-conflict");
  ASSERT_TRUE(pinned.ok());
  EXPECT_TRUE((*pinned)->prepare(m).ok());
}

TEST(OptimizedFp32Nodes, NamesAbsentFromTheModelAreIgnored) {
  Model m = named(kSquareNorm);
  const TensorMap in = {{"X", floats({1, 8}, {1, -0.5f, 0.25f, 0.75f, 0.5f, -1, 0.125f, 0.3f})}};
  EXPECT_EQ(values(run_spec("opt:fp16,fp32=not_in_this_candidate", m, in).at("Y")),
            values(run_spec("opt:fp16", m, in).at("Y")));
}

TEST(Fp32Placeholders, CommandsGetTheNodesOfTheirModelInlineAndInAFile) {
  Model m = named(kSquareNorm);
  const TensorMap in = {{"X", floats({1, 8}, {1, -0.5f, 0.25f, 0.75f, 0.5f, -1, 0.125f, 0.3f})}};
  auto engine = make_engine(
      "cmd[fp32=sq+absent+std]:sh -c 'printf \"nodes=%s file=%s\" \"$1\" \"$(tr \"\\n\" \";\" < \"$2\")\"; exit 3' "
      "sh {fp32_nodes} {fp32_nodes_file} {outputs}");
  ASSERT_TRUE(engine.ok()) << engine.error().message();
  auto prepared = (*engine)->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  auto run = (*prepared)->run(in, {});
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.error().what.find("nodes=sq,std file=sq;std;"), std::string::npos) << run.error().what;

  auto script = CheckScript::parse("sh -c 'test \"$1\" = sq && test \"$(cat \"$2\")\" = sq' sh {fp32_nodes} {fp32_nodes_file}",
                                   Fp32Nodes{{"sq"}, ""});
  ASSERT_TRUE(script.ok());
  auto checked = script->run(m, in, {});
  ASSERT_TRUE(checked.ok()) << checked.error().message();
  EXPECT_EQ(checked->exit_code, 0) << checked->output;
  auto none = CheckScript::parse("sh -c 'test -z \"$1\" && test -f \"$2\" && test ! -s \"$2\"' sh {fp32_nodes} {fp32_nodes_file}");
  ASSERT_TRUE(none.ok());
  auto empty = none->run(m, in, {});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->exit_code, 0) << empty->output;
}


TEST(OptimizedFp32Nodes, PinningANodeWithABodyKeepsTheBodyInFp32) {
  Model m = testing::parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool C, float[1] X) => (float[1] Y)
{
  Y = If (C) <
    then_branch = t () => (float[1] a) { a = Mul (X, X) },
    else_branch = e () => (float[1] b) { b = Neg (X) }
  >
}
)");
  m.graph.nodes[0].name = "branch";
  const float x = 1.000244140625f;  // x*x is not an fp16 value
  const TensorMap in = {{"C", Tensor::from_vector(DType::Bool, {}, std::vector<uint8_t>{1}).value()},
                        {"X", testing::floats({1}, {x})}};
  EXPECT_EQ(testing::values(testing::run_spec("opt:fp16", m, in).at("Y"))[0], 1.0f);
  EXPECT_EQ(testing::values(testing::run_spec("opt:fp16,fp32=branch", m, in).at("Y"))[0], x * x);
}


TEST(OptimizedFp32Nodes, EveryNodeInFp32IsTheFp32EngineBitForBit) {
  for (const char* fault : {"fp16-overflow", "broadcast-batch1"}) {
    const corpus::GeneratedModel g = corpus::generate(*corpus::find_family(fault), 100, corpus::kDefaultSeed);
    Fp32Nodes all;
    for (const Node& n : g.model.graph.nodes) all.names.push_back(n.name);
    TensorMap in;
    for (const auto& vi : g.model.graph.inputs) {
      Shape shape;
      for (const Dim& d : vi.type.dims) shape.push_back(d.value);
      in[vi.name] = testing::ramp(shape, -1, 1, 7);
    }
    const TensorMap fp32 = testing::run_spec("opt", g.model, in);
    const TensorMap pinned = testing::run_spec("opt:fp16,fp32=" + to_string(all), g.model, in);
    ASSERT_EQ(fp32.size(), pinned.size());
    for (const auto& [name, t] : fp32) EXPECT_EQ(testing::values(t), testing::values(pinned.at(name))) << fault << " " << name;
    EXPECT_NE(testing::values(testing::run_spec("opt:fp16", g.model, in).begin()->second),
              testing::values(fp32.begin()->second)) << fault;
  }
}

}  // namespace
}  // namespace reduce
