// `reduce` with checks that key on the model's own names, outputs and types: Polygraphy's TestReduce
// cases rebuilt, a golden check by output name, a kernel library loaded at the first real kernel.
// None is a failure of the engine's setup; each used to end in exit 7 or a bogus reproducer.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/model_io.h"
#include "fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

// Polygraphy's reducable.onnx in spirit: two inputs, nodes named onnx_graphsurgeon_node_1, _3, ...
std::string graph_surgeon_model(const TempDir& dir, const std::string& text, const std::string& file) {
  Model m = testing::parse_model(text);
  size_t k = 1;
  for (Node& n : m.graph.nodes)
    if (n.op_type != "Constant") n.name = "onnx_graphsurgeon_node_" + std::to_string(k), k += 2;
  const fs::path path = dir / file;
  EXPECT_TRUE(save_model(m, path).ok());
  return path.string();
}

const char* kTwoBranches = R"(
<ir_version: 8, opset_import: ["" : 17]>
reducable (float[2, 3] X0, float[2, 3] X1) => (float[2, 3] Y)
{
  a = Relu(X0)
  b = Neg(X1)
  c = Add(a, b)
  Y = Abs(c)
}
)";

// Polygraphy's fake_reduce_checker.py as a shell script: fails while every named node is in the
// model (its bytes hold the node names), with "REALLY BAD!" when node 1 is there, else "FOUND A
// BAD NODE!"; exit codes as given.
std::string fake_checker(const TempDir& dir) {
  const fs::path path = dir / "fake_reduce_checker.sh";
  write_bytes(path,
              "#!/bin/sh\n"
              "model=$1; default=$2; fail=$3; shift 3\n"
              "for node in \"$@\"; do grep -aq \"$node\\$\\|$node[^0-9]\" \"$model\" || exit $default; done\n"
              "if grep -aq 'onnx_graphsurgeon_node_1[^0-9]' \"$model\"; then echo 'REALLY BAD!'; else echo 'FOUND A BAD NODE!'; fi\n"
              "exit $fail\n");
  return path.string();
}

struct Reduced {
  int exit_code = -1;
  std::string out, bundle_model;
  std::string report;
};

Reduced reduce_with(const TempDir& dir, const std::string& model, const std::string& engine,
                    std::vector<std::string> extra, const std::string& out) {
  std::vector<std::string> args{model, "--engine", engine, "-j", "1", "-o", (dir / out).string()};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run_reduce(args);
  Reduced x{r.exit_code, r.out + r.err, {}, {}};
  if (fs::exists(dir / out / "model.onnx")) x.bundle_model = read_bytes(dir / out / "model.onnx");
  if (fs::exists(dir / out / "report.json")) x.report = read_bytes(dir / out / "report.json");
  return x;
}

bool holds_node(const std::string& bytes, const std::string& name) {
  for (size_t at = bytes.find(name); at != std::string::npos; at = bytes.find(name, at + 1))
    if (at + name.size() == bytes.size() || !std::isdigit(static_cast<unsigned char>(bytes[at + name.size()]))) return true;
  return false;
}

TEST(PolygraphyTestReduce, EachSingleFailingNodeIsIsolatedByName) {
  TempDir dir;
  const std::string model = graph_surgeon_model(dir, kTwoBranches, "reducable.onnx");
  const std::string checker = fake_checker(dir);
  for (const std::string node : {"onnx_graphsurgeon_node_1", "onnx_graphsurgeon_node_3", "onnx_graphsurgeon_node_5",
                                 "onnx_graphsurgeon_node_7"}) {
    const Reduced r = reduce_with(dir, model, "check:sh " + checker + " {model} 0 1 " + node, {}, node);
    ASSERT_EQ(r.exit_code, 0) << node << "\n" << r.out;
    EXPECT_NE(r.report.find("\"conclusion\": \"model-dependent\""), std::string::npos) << r.report;
    EXPECT_NE(r.report.find("\"reduced\": {\n    \"nodes\": 1"), std::string::npos) << node << "\n" << r.report;
    EXPECT_TRUE(holds_node(r.bundle_model, node)) << node;
  }
}

TEST(PolygraphyTestReduce, RequiredBranchesStayTogether) {
  TempDir dir;
  const std::string model = graph_surgeon_model(dir, kTwoBranches, "reducable.onnx");
  const Reduced r = reduce_with(dir, model, "check:sh " + fake_checker(dir) + " {model} 0 1 onnx_graphsurgeon_node_1 onnx_graphsurgeon_node_3",
                                {}, "branches");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.report.find("\"reduced\": {\n    \"nodes\": 2"), std::string::npos) << r.report;
  EXPECT_TRUE(holds_node(r.bundle_model, "onnx_graphsurgeon_node_1"));
  EXPECT_TRUE(holds_node(r.bundle_model, "onnx_graphsurgeon_node_3"));
}

TEST(PolygraphyTestReduce, CustomReturnCodesAndTwoFailRegexes) {
  TempDir dir;
  const std::string model = graph_surgeon_model(dir, kTwoBranches, "reducable.onnx");
  const std::string checker = fake_checker(dir);
  // Fails with 3, passes with 4: only code 3 is a failure.
  const Reduced codes = reduce_with(dir, model, "check:sh " + checker + " {model} 4 3 onnx_graphsurgeon_node_5",
                                    {"--fail-code", "3"}, "codes");
  ASSERT_EQ(codes.exit_code, 0) << codes.out;
  EXPECT_TRUE(holds_node(codes.bundle_model, "onnx_graphsurgeon_node_5"));
  // Exit 0 always; the messages decide.
  const Reduced messages = reduce_with(dir, model, "check:sh " + checker + " {model} 0 0 onnx_graphsurgeon_node_7",
                                       {"--fail-regex", "REALLY BAD", "--fail-regex", "FOUND A BAD NODE"}, "messages");
  ASSERT_EQ(messages.exit_code, 0) << messages.out;
  EXPECT_NE(messages.report.find("\"reduced\": {\n    \"nodes\": 1"), std::string::npos) << messages.report;
  EXPECT_TRUE(holds_node(messages.bundle_model, "onnx_graphsurgeon_node_7"));
}

// reducable_with_const.onnx: no graph inputs, a Constant feeding the failing node.
TEST(PolygraphyTestReduce, AModelWithAConstantAndNoInputs) {
  TempDir dir;
  const std::string model = graph_surgeon_model(dir, R"(
<ir_version: 8, opset_import: ["" : 17]>
reducable_with_const () => (float[2, 3] Y)
{
  k = Constant<value = float[2, 3] {1, -2, 3, -4, 5, -6}>()
  a = Relu(k)
  Y = Neg(a)
}
)", "reducable_with_const.onnx");
  const Reduced r = reduce_with(dir, model, "check:sh " + fake_checker(dir) + " {model} 0 1 onnx_graphsurgeon_node_1", {}, "const");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(holds_node(r.bundle_model, "onnx_graphsurgeon_node_1"));
}

// The golden check: the engine's outputs compared by name with values saved from the full model
// (`polygraphy run {model} --load-outputs golden.json`). A probe whose output took the model's
// output name mismatched its golden value.
TEST(ModelIndependenceCli, AGoldenCheckByOutputNameIsNotTakenForTheSetups) {
  TempDir dir;
  const fs::path model = dir / "bcast.onnxtxt";
  write_bytes(model, testing::kBroadcastChain);
  auto saved = run_reduce({"run", model.string(), "--seed", "1", "--save-inputs", (dir / "in").string(), "--save-outputs",
                           (dir / "golden").string()});
  ASSERT_EQ(saved.exit_code, 0) << saved.out << saved.err;
  const std::string check = "check:" + std::string(REDUCE_BINARY_DIR) +
                            "/reduce check {model} --engine opt:fault=broadcast-batch1 --inputs {inputs} --expected " +
                            (dir / "golden").string();
  const Reduced r = reduce_with(dir, model.string(), check, {"--inputs", (dir / "in").string()}, "reduced");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.report.find("\"Mul\": 1"), std::string::npos) << r.report;
}

// An engine that loads its kernel library at its first real kernel: the Identity probe passes, the
// Add probe fails like the model. The reproducer is one node, written with a warning.
TEST(ModelIndependenceCli, AKernelLibraryMissingAtTheFirstRealKernelIsReducedWithAWarning) {
  TempDir dir;
  const std::string model = graph_surgeon_model(dir, kTwoBranches, "m.onnx");
  const fs::path s = dir / "kernels.sh";
  write_bytes(s, "#!/bin/sh\nif grep -aq -e Relu -e Neg -e Add -e Abs \"$1\"; then echo 'cannot load libkernels.so' >&2; exit 1; fi\nexit 0\n");
  const Reduced r = reduce_with(dir, model, "check:sh " + s.string() + " {model}", {}, "kernels");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("WARNING: a probe model that shares nothing with the reproducer fails the same way"), std::string::npos) << r.out;
  EXPECT_NE(r.report.find("\"conclusion\": \"mixed\""), std::string::npos) << r.report;
  EXPECT_NE(r.report.find("\"setup_suspect\": true"), std::string::npos) << r.report;
  const std::string md = read_bytes(dir / "kernels" / "report.md");
  EXPECT_NE(md.find("may show the engine's setup"), std::string::npos) << md;
}

}  // namespace
}  // namespace reduce
