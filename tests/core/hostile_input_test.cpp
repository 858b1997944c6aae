// Hostile models and files are refused with one error naming the file and the node, before
// ONNX shape inference or any engine runs: attributes that would divide by zero, subgraphs
// nested past the limit, and files that are not regular files (FIFOs, devices).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>

#include "core/extract.h"
#include "core/model_io.h"
#include "core/tensor_file.h"
#include "core/tensor_set.h"
#include "core/validate.h"
#include "process_support.h"
#include "test_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// ---- Attributes that shape inference and kernels divide by (issue 16, finding 2) ----

struct BadAttributeCase {
  const char* op;
  const char* attribute;
  std::vector<int64_t> values;  // one value: an int attribute (group), else a list
  const char* message;          // the error after "node producing 'Z' (<op>): "
};

const BadAttributeCase kBadAttributes[] = {
    {"Conv", "strides", {0, 0}, "attribute 'strides' must be positive, got [0, 0]"},
    {"Conv", "strides", {1, -1}, "attribute 'strides' must be positive, got [1, -1]"},
    {"Conv", "dilations", {0, 1}, "attribute 'dilations' must be positive, got [0, 1]"},
    {"Conv", "group", {0}, "attribute 'group' must be positive, got 0"},
    {"Conv", "group", {-2}, "attribute 'group' must be positive, got -2"},
    {"Conv", "kernel_shape", {0, 3}, "attribute 'kernel_shape' must be positive, got [0, 3]"},
    {"Conv", "pads", {-1, 0, 0, 0}, "attribute 'pads' must not be negative, got [-1, 0, 0, 0]"},
    {"MaxPool", "strides", {0, 0}, "attribute 'strides' must be positive, got [0, 0]"},
    {"MaxPool", "dilations", {0, 0}, "attribute 'dilations' must be positive, got [0, 0]"},
    {"MaxPool", "kernel_shape", {0, 2}, "attribute 'kernel_shape' must be positive, got [0, 2]"},
    {"AveragePool", "strides", {0, 1}, "attribute 'strides' must be positive, got [0, 1]"},
    {"AveragePool", "strides", {-1, -1}, "attribute 'strides' must be positive, got [-1, -1]"},
    {"ConvTranspose", "strides", {0, 0}, "attribute 'strides' must be positive, got [0, 0]"},
    {"ConvTranspose", "dilations", {1, -1}, "attribute 'dilations' must be positive, got [1, -1]"},
    {"ConvTranspose", "group", {0}, "attribute 'group' must be positive, got 0"},
    {"ConvTranspose", "output_padding", {-1, 0}, "attribute 'output_padding' must not be negative, got [-1, 0]"},
};

bool is_pool(const std::string& op) { return op.find("Pool") != std::string::npos; }
bool is_int(const BadAttributeCase& c) { return std::string(c.attribute) == "group"; }

// A model with a Relu and the node under test, whose output Z is a graph output.
std::string conv_model_text(const std::string& op, const std::string& attributes) {
  std::string attrs = attributes;
  if (is_pool(op) && attributes.find("kernel_shape") == std::string::npos)
    attrs = "kernel_shape = [2, 2]" + (attrs.empty() ? "" : ", " + attrs);
  const std::string node = "Z = " + op + (attrs.empty() ? "" : " <" + attrs + ">") + (is_pool(op) ? " (X)" : " (X, W)");
  return R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 8, 8] X, float[2, 2, 3, 3] W) => (float[1, 2, 8, 8] Y, float Z)
{
  Y = Relu(X)
  )" + node + "\n}\n";
}

std::string attribute_text(const BadAttributeCase& c) {
  std::string text = std::string(c.attribute) + " = ";
  if (is_int(c)) return text + std::to_string(c.values[0]);
  for (size_t i = 0; i < c.values.size(); ++i) text += (i ? ", " : "[") + std::to_string(c.values[i]);
  return text + "]";
}

std::string bad_attribute_error(const BadAttributeCase& c) {
  return std::string("node producing 'Z' (") + c.op + "): " + c.message;
}

// The model of a case as the IR can hold it, bypassing load-time validation: a valid node whose
// attribute is then set to the case's values.
Model model_with_bad_attribute(const BadAttributeCase& c) {
  Model m = testing::parse_model(conv_model_text(c.op, ""));
  Node& node = m.graph.nodes.at(1);
  std::erase_if(node.attributes, [&](const Attribute& a) { return a.name == c.attribute; });
  Attribute a;
  a.name = c.attribute;
  if (is_int(c)) {
    a.kind = Attribute::Kind::Int;
    a.i = c.values[0];
  } else {
    a.kind = Attribute::Kind::Ints;
    a.ints = c.values;
  }
  node.attributes.push_back(a);
  return m;
}

TEST(BadAttributes, TextModelsAreRefusedNamingTheNode) {
  for (const auto& c : kBadAttributes) {
    auto m = parse_model_text(conv_model_text(c.op, attribute_text(c)));
    ASSERT_FALSE(m.ok()) << attribute_text(c);
    EXPECT_EQ(m.error().what, bad_attribute_error(c));
  }
}

TEST(BadAttributes, ValidAttributesAreAccepted) {
  const std::pair<const char*, const char*> kValid[] = {
      {"Conv", "strides = [2, 1], dilations = [1, 2], group = 1, pads = [1, 1, 1, 1]"},
      {"MaxPool", "strides = [2, 2], pads = [0, 0, 1, 1]"},
      {"AveragePool", "kernel_shape = [3, 3], strides = [1, 2]"},
      {"ConvTranspose", "strides = [2, 2], output_padding = [1, 1]"}};
  for (const auto& [op, attrs] : kValid) {
    auto m = parse_model_text(conv_model_text(op, attrs));
    EXPECT_TRUE(m.ok()) << op << ": " << m.error().message();
  }
}

TEST(BadAttributes, ShapeInferenceRefusesThemInsteadOfDividingByZero) {
  for (const auto& c : kBadAttributes) {
    const Model m = model_with_bad_attribute(c);
    auto types = infer_value_types(m);
    ASSERT_FALSE(types.ok()) << c.op << " " << attribute_text(c);
    EXPECT_EQ(types.error().what, bad_attribute_error(c));
    EXPECT_FALSE(Extractor::create(m).ok()) << c.op << " " << attribute_text(c);
  }
}

TEST(BadAttributes, LoadingAFileNamesTheFileAndTheNode) {
  TempDir dir;
  for (const auto& c : kBadAttributes) {
    const fs::path path = dir / "m.onnx";
    ASSERT_TRUE(save_model(model_with_bad_attribute(c), path).ok());
    auto m = load_model(path);
    ASSERT_FALSE(m.ok()) << c.op << " " << attribute_text(c);
    EXPECT_EQ(m.error().message(), path.string() + ": " + bad_attribute_error(c));
  }
}

TEST(BadAttributes, CheckExitsTwoEvenWhenTheNodeIsDead) {
  TempDir dir;
  const fs::path path = dir / "m.onnx";
  Model m = model_with_bad_attribute(kBadAttributes[0]);
  // Without Z as an output the Conv is dead: no engine would run it, but inference would.
  m.graph.outputs.pop_back();
  ASSERT_TRUE(save_model(m, path).ok());
  auto r = testing::run_reduce({"check", path.string(), "--engine", "ref"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "error: " + path.string() + ": " + bad_attribute_error(kBadAttributes[0]) + "\n");
}

// ---- Subgraph nesting (issue 16, finding 3) ----

// A text model whose output comes from `depth` Ifs, each in the then-branch of the one before.
std::string nested_ifs_text(int depth) {
  // Level L wraps level L-1: its prefix, then the inner levels, then its suffix.
  std::string prefixes, suffixes;
  for (int level = depth; level >= 1; --level) {
    const std::string l = std::to_string(level);
    prefixes += "r" + l + " = If(C) <then_branch = t" + l + " () => (float[2] r" + std::to_string(level - 1) + ") { ";
  }
  for (int level = 1; level <= depth; ++level) {
    const std::string l = std::to_string(level);
    suffixes += " }, else_branch = e" + l + " () => (float[2] e" + l + ") { e" + l + " = Identity(X) }>";
  }
  return "<ir_version: 8, opset_import: [\"\" : 17]>\ng (bool C, float[2] X) => (float[2] r" + std::to_string(depth) +
         ")\n{\n  " + prefixes + "r0 = Identity(X)" + suffixes + "\n}\n";
}

// The same model built in the IR (no parser involved), for binary files of any depth.
Model nested_ifs_model(int depth) {
  const ValueType f2 = ValueType::tensor(DType::Float, {2});
  auto identity = [&](const std::string& out) {
    Graph g;
    g.name = "g_" + out;
    g.nodes.push_back(Node{"", "Identity", "", {"X"}, {out}, {}, {}, {}});
    g.outputs.push_back(ValueInfo{out, f2, {}});
    return g;
  };
  Graph inner = identity("r0");
  for (int level = 1; level <= depth; ++level) {
    const std::string r = "r" + std::to_string(level);
    Graph g;
    g.name = "g_" + r;
    Node n{"", "If", "", {"C"}, {r}, {}, {}, {}};
    auto branch = [](const char* name, Graph body) {
      Attribute a;
      a.name = name;
      a.kind = Attribute::Kind::Graph;
      a.g = std::make_shared<const Graph>(std::move(body));
      return a;
    };
    n.attributes = {branch("then_branch", std::move(inner)), branch("else_branch", identity("e" + std::to_string(level)))};
    g.nodes.push_back(std::move(n));
    g.outputs.push_back(ValueInfo{r, f2, {}});
    inner = std::move(g);
  }
  Model m;
  m.opset_imports = {{"", 17}};
  m.graph = std::move(inner);
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo{"C", ValueType::tensor(DType::Bool, {}), {}}, ValueInfo{"X", f2, {}}};
  return m;
}

const std::string kTooDeep = "subgraphs are nested more than " + std::to_string(kMaxSubgraphDepth) + " deep";

TEST(SubgraphDepth, TextModelsNestedToTheLimitLoad) {
  auto m = parse_model_text(nested_ifs_text(kMaxSubgraphDepth));
  EXPECT_TRUE(m.ok()) << m.error().message();
}

TEST(SubgraphDepth, TextModelsNestedPastTheLimitAreRefused) {
  auto m = parse_model_text(nested_ifs_text(kMaxSubgraphDepth + 1));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().what, kTooDeep);
}

TEST(SubgraphDepth, TextNestedFiveThousandDeepIsRefusedBeforeParsing) {
  TempDir dir;
  testing::write_bytes(dir / "deep.onnxtxt", nested_ifs_text(5000));
  auto m = load_model(dir / "deep.onnxtxt");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().where, (dir / "deep.onnxtxt").string());
  EXPECT_NE(m.error().what.find("nested more than"), std::string::npos) << m.error().what;
}

TEST(SubgraphDepth, BinaryModelsNestedToTheLimitLoad) {
  TempDir dir;
  ASSERT_TRUE(save_model(nested_ifs_model(kMaxSubgraphDepth), dir / "m.onnx").ok());
  auto m = load_model(dir / "m.onnx");
  EXPECT_TRUE(m.ok()) << m.error().message();
}

TEST(SubgraphDepth, BinaryModelsNestedPastTheLimitAreRefusedWithTheReason) {
  TempDir dir;
  for (int depth : {kMaxSubgraphDepth + 1, 200}) {
    ASSERT_TRUE(save_model(nested_ifs_model(depth), dir / "m.onnx").ok());
    auto m = load_model(dir / "m.onnx");
    ASSERT_FALSE(m.ok()) << depth;
    EXPECT_EQ(m.error().message(), (dir / "m.onnx").string() + ": " + kTooDeep);
  }
}

TEST(Validation, ProblemsInsideSubgraphsNameTheEnclosingNode) {
  Model m = nested_ifs_model(2);
  // Subgraphs are shared and const: edit copies, innermost first.
  Graph middle = *m.graph.nodes[0].attributes[0].g;
  Graph innermost = *middle.nodes[0].attributes[0].g;
  innermost.nodes[0].inputs = {""};
  middle.nodes[0].name = "inner";
  middle.nodes[0].attributes[0].g = std::make_shared<const Graph>(std::move(innermost));
  m.graph.nodes[0].attributes[0].g = std::make_shared<const Graph>(std::move(middle));
  m.graph.nodes[0].name = "outer";
  Status s = validate_model(m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().what,
            "node 'outer' (If) subgraph 'g_r1': node 'inner' (If) subgraph 'g_r0': node producing 'r0' (Identity): "
            "input 0 is required");
}

TEST(Validation, OpsetsNewerThanTheOnnxLibraryMayAddInputsButKeepRequiredOnes) {
  // ONNX 1.12 knows Pad up to opset 13 (three inputs); Pad-18 adds `axes`.
  const char* kPad19 = R"(
<ir_version: 9, opset_import: ["" : 19]>
g (float[2, 3] X, int64[2] P, int64[1] A) => (float[2, 7] Y) { Y = Pad <mode = "wrap"> (X, P, , A) }
)";
  auto m = parse_model_text(kPad19);
  ASSERT_TRUE(m.ok()) << m.error().message();
  m->graph.nodes[0].inputs[1] = "";
  Status s = validate_model(*m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().what, "node producing 'Y' (Pad): input 1 is required");
}

TEST(Validation, AnOpsNewerVersionDecidesItsArityOverTheLibrarysOlderSchema) {
  // OptionalHasElement-15 requires its input; version 18 makes it optional (an empty optional).
  auto model = [](int opset) {
    Model m;
    m.opset_imports = {{"", opset}};
    Node n;
    n.op_type = "OptionalHasElement";
    n.outputs = {"has"};
    m.graph.nodes.push_back(n);
    return m;
  };
  EXPECT_TRUE(validate_model(model(18)).ok());
  Status s = validate_model(model(15));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().what, "node producing 'has' (OptionalHasElement): input 0 is required");
}

TEST(SubgraphDepth, ValidationRefusesDeepModelsBuiltInMemory) {
  Status s = validate_model(nested_ifs_model(kMaxSubgraphDepth + 1));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().what, kTooDeep);
  EXPECT_TRUE(validate_model(nested_ifs_model(kMaxSubgraphDepth)).ok());
}

// ---- Files that are not regular files (issue 16, finding 4) ----

// A FIFO nobody writes to: opening it for reading the ordinary way blocks forever.
fs::path make_fifo(const fs::path& path) {
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
  return path;
}

TEST(NotRegularFiles, AFifoAsTheModelIsRefused) {
  TempDir dir;
  for (const char* name : {"m.onnx", "m.onnxtxt"}) {
    const fs::path fifo = make_fifo(dir / name);
    auto m = load_model(fifo);
    ASSERT_FALSE(m.ok()) << name;
    EXPECT_EQ(m.error().message(), fifo.string() + ": is a FIFO, not a regular file");
  }
}

TEST(NotRegularFiles, ATextModelLinkedToDevZeroIsRefused) {
  TempDir dir;
  fs::create_symlink("/dev/zero", dir / "zero.onnxtxt");
  auto m = load_model(dir / "zero.onnxtxt");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message(), (dir / "zero.onnxtxt").string() + ": is a character device, not a regular file");
}

TEST(NotRegularFiles, AFifoAsATensorFileIsRefused) {
  TempDir dir;
  for (const char* name : {"in.npy", "in.npz", "in.pb"}) {
    const fs::path fifo = make_fifo(dir / name);
    auto t = read_tensor_set(fifo, "input");
    ASSERT_FALSE(t.ok()) << name;
    EXPECT_EQ(t.error().message(), fifo.string() + ": is a FIFO, not a regular file");
  }
}

TEST(NotRegularFiles, AFifoInAnInputFolderIsRefused) {
  TempDir dir;
  fs::create_directories(dir / "inputs");
  const fs::path fifo = make_fifo(dir / "inputs" / "input_0.pb");
  auto t = read_tensor_set(dir / "inputs", "input");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message(), fifo.string() + ": is a FIFO, not a regular file");
}

TEST(NotRegularFiles, AFifoAsExternalDataIsRefused) {
  TempDir dir;
  Model m = testing::parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4096] X) => (float[4096] Y)
{
  Y = Mul(X, X)
}
)");
  auto w = Tensor::allocate(DType::Float, {4096});
  m.graph.initializers.push_back({"w", *w, {}});
  m.graph.nodes[0].inputs[1] = "w";
  ASSERT_TRUE(save_model(m, dir / "m.onnx", {.weights = SaveOptions::Weights::External, .external_file = "w.data"}).ok());
  fs::remove(dir / "w.data");
  make_fifo(dir / "w.data");
  auto loaded = load_model(dir / "m.onnx");
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error().message().find("is a FIFO, not a regular file"), std::string::npos) << loaded.error().message();
}

TEST(NotRegularFiles, CheckAndRunExitTwoOnFifos) {
  TempDir dir;
  const fs::path fifo = make_fifo(dir / "m.onnx");
  auto r = testing::run_reduce({"check", fifo.string(), "--engine", "ref"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "error: " + fifo.string() + ": is a FIFO, not a regular file\n");

  const fs::path model = dir / "relu.onnx";
  ASSERT_TRUE(save_model(testing::parse_model(conv_model_text("MaxPool", "")), model).ok());
  const fs::path inputs = make_fifo(dir / "in.npz");
  r = testing::run_reduce({"run", model.string(), "--inputs", inputs.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(inputs.string() + ": is a FIFO, not a regular file"), std::string::npos) << r.err;
}

TEST(NotRegularFiles, AFifoInAConformanceFolderFailsThatTest) {
  TempDir dir;
  const fs::path test = dir / "suite" / "test_relu";
  fs::create_directories(test / "test_data_set_0");
  ASSERT_TRUE(save_model(testing::parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y)
{
  y = Relu(x)
}
)"), test / "model.onnx").ok());
  ASSERT_TRUE(write_tensor_pb(test / "test_data_set_0" / "output_0.pb", "y", Tensor::allocate(DType::Float, {2}).value()).ok());
  const fs::path fifo = make_fifo(test / "test_data_set_0" / "input_0.pb");
  auto r = testing::run_reduce({"conformance", (dir / "suite").string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find(fifo.string() + ": is a FIFO, not a regular file"), std::string::npos) << r.out << r.err;
}

// ---- Text models that do not parse (issue 16, finding 13) ----

TEST(TextParseErrors, AreOneLineWithThePositionAndTheTextNearIt) {
  const std::string text = "<ir_version: 8, opset_import: [\"\" : 15]>\n"
                           "g (float[2] X) => (float[2] Y)\n"
                           "{\n"
                           "  Y = Relu(X\n"
                           "}\n";
  auto m = parse_model_text(text);
  ASSERT_FALSE(m.ok());
  const std::string message = m.error().message();
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message.rfind("cannot parse the model text: line 5 column ", 0), 0u) << message;
  EXPECT_NE(message.find("(near `"), std::string::npos) << message;
}

TEST(TextParseErrors, CheckPrintsOneLineNamingTheFile) {
  TempDir dir;
  const fs::path path = dir / "broken.onnxtxt";
  testing::write_bytes(path, "<ir_version: 8, opset_import: [\"\" : 15]>\ng (float[2] X) => (float[2] Y)\n{ Y = Relu(X) Z }\n");
  auto r = testing::run_reduce({"check", path.string(), "--engine", "ref"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("error: " + path.string() + ": cannot parse the model text: line 3 ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace reduce
