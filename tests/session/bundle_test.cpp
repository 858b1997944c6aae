// The reproducer bundle: report.md's Reproducer section, weights of its own (not a link to the
// original's data file), filled weights stored small when the engine still fails the same way.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "core/mapped_file.h"
#include "core/model_io.h"
#include "core/tensor_file.h"
#include "engine/engine.h"
#include "report/reproducer_section.h"
#include "session/bundle.h"
#include "session/session.h"
#include "test_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::parse_model;
using testing::read_bytes;
using testing::TempDir;

// The reference, except that it refuses (an error when preparing) every model with a node `refuses` names.
class RefusingEngine : public Engine {
 public:
  using Refuses = std::function<bool(const Graph&, const Node&)>;
  explicit RefusingEngine(Refuses refuses) : refuses_(std::move(refuses)) {}
  std::string name() const override { return "refusing"; }
  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    for (const Node& n : model.graph.nodes)
      if (refuses_(model.graph, n)) return make_error("this engine cannot run a " + n.op_type + " node here");
    return make_reference_engine(1)->prepare(model);
  }

 private:
  Refuses refuses_;
};

struct Reduction {
  SessionOutcome outcome;
  fs::path bundle;
};

// `model` (saved at `model_path`) reduced in-process against `engine`, bundled in `out`.
Reduction reduce_with(const Model& model, const fs::path& model_path, std::vector<NamedTensor> inputs,
                      std::shared_ptr<Engine> engine, const fs::path& out, std::optional<size_t> simplify_runs,
                      bool resume = false) {
  OracleOptions o;
  o.engine = "refusing";
  o.engine_instance = std::move(engine);
  auto oracle = Oracle::create(model, std::move(inputs), o);
  if (!oracle) {
    ADD_FAILURE() << oracle.error().message();
    return {};
  }
  SessionOptions options;
  options.model_path = model_path;
  options.out_dir = out;
  options.reduce.simplify_runs = simplify_runs;
  options.resume = resume;
  Reduction r{run_session(**oracle, model, options, SessionConsole{}, std::stop_token{}), out};
  EXPECT_EQ(r.outcome.status, SessionStatus::Reduced) << (r.outcome.error ? r.outcome.error->message() : "");
  return r;
}

nlohmann::json report_json_of(const fs::path& bundle) { return nlohmann::json::parse(read_bytes(bundle / "report.json")); }

// The text of report.md's Reproducer section (its heading and fenced block).
std::string reproducer_part(const fs::path& bundle) {
  const std::string md = read_bytes(bundle / "report.md");
  const size_t from = md.find("**Reproducer**");
  if (from == std::string::npos) return "";
  const size_t block = md.find("```text\n", from);
  const size_t end = md.find("\n```\n", block);
  return md.substr(from, end == std::string::npos ? std::string::npos : end + 5 - from);
}

uint64_t folder_size(const fs::path& dir) {
  uint64_t bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) bytes += e.file_size();
  return bytes;
}

TEST(ReproducerSection, ShowsTheOpItsAttributesShapesAndWeightsOfAReducedRealExport) {
  const fs::path dir = fs::path(REDUCE_SHARED_FIXTURES) / "exported" / "bert_dynamo";
  auto model = load_model(dir / "model.onnx");
  ASSERT_TRUE(model.ok()) << model.error().message();
  std::vector<NamedTensor> inputs;
  for (size_t k = 0; k < model->graph.inputs.size(); ++k) {
    auto t = read_tensor_pb(dir / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb"));
    ASSERT_TRUE(t.ok()) << t.error().message();
    inputs.push_back(std::move(*t));
  }
  TempDir tmp;
  auto refuses_layernorm = std::make_shared<RefusingEngine>(
      [](const Graph&, const Node& n) { return n.op_type == "LayerNormalization"; });
  const Reduction r = reduce_with(*model, dir / "model.onnx", inputs, refuses_layernorm, tmp / "out", 0);
  ASSERT_TRUE(r.outcome.report.has_value());
  ASSERT_EQ(r.outcome.report->reduced_nodes, 1u);
  const std::string section = reproducer_part(r.bundle);
  ASSERT_FALSE(section.empty()) << read_bytes(r.bundle / "report.md");
  EXPECT_NE(section.find("opset_import: ai.onnx 20"), std::string::npos) << section;
  // The node with its attribute values and the shapes the run fed and produced.
  auto reduced = load_model(r.bundle / "model.onnx");
  ASSERT_TRUE(reduced.ok()) << reduced.error().message();
  const Node& ln = reduced->graph.nodes.at(0);
  const Attribute* eps = ln.attribute("epsilon");
  ASSERT_NE(eps, nullptr);
  EXPECT_NE(section.find(" = LayerNormalization<"), std::string::npos) << section;
  std::ostringstream eps_text;
  eps_text << "epsilon=" << std::setprecision(4) << eps->f;
  EXPECT_NE(section.find(eps_text.str()), std::string::npos) << section;
  auto fed = read_tensor_pb(r.bundle / "inputs" / "input_0.pb");
  ASSERT_TRUE(fed.ok());
  const std::string fed_type = ValueType::tensor(fed->tensor.dtype(), fed->tensor.shape()).to_string();
  EXPECT_NE(section.find("input " + fed->name + ": " + fed_type), std::string::npos) << section;
  EXPECT_NE(section.find(ln.outputs[0] + ": " + fed_type + " = LayerNormalization"), std::string::npos) << section;
  // The scale (one value per hidden unit) as its type and range, not its values.
  const std::string scale = ln.inputs.at(1);
  const Tensor& w = reduced->graph.find_initializer(scale)->tensor;
  const std::regex summary("weight " + std::regex_replace(scale, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                           R"(: float\[\d+\] (all -?[0-9.e+-]+|-?[0-9.e+-]+\.\.-?[0-9.e+-]+)\n)");
  EXPECT_TRUE(std::regex_search(section, summary)) << section;
  EXPECT_GT(w.elements(), 8u);
  EXPECT_LT(section.size(), 1200u) << "a one-node reproducer is a few lines";
}

TEST(ReproducerSection, AHugeReproducerIsCappedAndBodiesAreSummarized) {
  std::string text = "<ir_version: 8, opset_import: [\"\" : 17]>\nchain (float[2, 3] X, bool C) => (float[2, 3] Y)\n{\n"
                     "  v0 = Relu(X)\n";
  for (int k = 1; k < 60; ++k) text += "  v" + std::to_string(k) + " = Relu(v" + std::to_string(k - 1) + ")\n";
  text += "  Y = If(C) <then_branch = g1 () => (float[2, 3] a) { a = Neg(v59) },"
          " else_branch = g2 () => (float[2, 3] b) { t = Abs(v59) b = Exp(t) }>\n}\n";
  const Model m = parse_model(text);
  const std::string section = reproducer_section(m, {}, {}, 40);
  EXPECT_NE(section.find("v39: float[2,3] = Relu(v38)"), std::string::npos) << section;
  EXPECT_EQ(section.find("= Relu(v39)"), std::string::npos) << section;
  EXPECT_NE(section.find("... 21 more nodes (model.onnx has them all)"), std::string::npos) << section;
  EXPECT_LT(std::count(section.begin(), section.end(), '\n'), 50);
  // The If is past the cap; shown alone, its bodies are node counts and op types.
  Model if_only = m;
  if_only.graph.nodes.erase(if_only.graph.nodes.begin(), if_only.graph.nodes.end() - 1);
  const std::string body = reproducer_section(if_only, {}, {}, 40);
  EXPECT_NE(body.find("else_branch=graph(2 nodes: Abs, Exp)"), std::string::npos) << body;
  EXPECT_NE(body.find("then_branch=graph(1 nodes: Neg)"), std::string::npos) << body;
}

TEST(ReproducerSection, AWeightIsSummarizedByItsRangeOrOneValueNeverDumped) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4096] X) => (float[4096] Y, int64[2] S)
<float[1] W = {0}, int64[2] shape = {1, -1}>
{
  Y = Add(X, W)
  S = Identity(shape)
}
)");
  std::vector<float> ramp(4096);
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<float>(i) / 4096.0f - 0.5f;
  m.graph.initializers.at(0).tensor = Tensor::from_vector(DType::Float, {4096}, ramp).value();
  const std::string section = reproducer_section(m, {}, {});
  EXPECT_NE(section.find("weight W: float[4096] -0.5..0.4998\n"), std::string::npos) << section;
  EXPECT_NE(section.find("weight shape: int64[2] = [1, -1]\n"), std::string::npos) << section;
  EXPECT_LT(section.size(), 600u) << section;
}

// A chain that sums one row of each of kTables embedding tables (kTableBytes each, 3.1 GiB in all)
// kept in big.data, a file with a hole where the weights are: several GB that cost no disk.
constexpr int64_t kTables = 40, kRows = 20480, kCols = 1024;
constexpr uint64_t kTableBytes = uint64_t{kRows} * kCols * 4;

Expected<Model> big_model_with_external_weights(const TempDir& dir) {
  const fs::path data = dir / "big.data";
  const int fd = ::open(data.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(kTables * kTableBytes)) != 0) return make_error("cannot make big.data");
  ::close(fd);
  REDUCE_ASSIGN(auto mapped, MappedFile::open(data));
  Model m;
  m.opset_imports = {{"", 17}};
  m.graph.inputs = {{"idx", ValueType::tensor(DType::Int64, {1}), {}}};
  SharedWeights where("big.data");
  for (int64_t k = 0; k < kTables; ++k) {
    const std::string n = std::to_string(k);
    Initializer table;
    table.name = "table_" + n;
    REDUCE_ASSIGN(table.tensor, Tensor::view(DType::Float, {kRows, kCols}, mapped,
                                             mapped->bytes().data() + k * kTableBytes, kTableBytes));
    where.add(table.tensor, {k * kTableBytes, kTableBytes});
    m.graph.initializers.push_back(table);
    Node gather;
    gather.name = "gather_" + n;
    gather.op_type = "Gather";
    gather.inputs = {table.name, "idx"};
    gather.outputs = {"row_" + n};
    m.graph.nodes.push_back(gather);
    if (k == 0) continue;
    Node add;
    add.name = "add_" + n;
    add.op_type = "Add";
    add.inputs = {k == 1 ? "row_0" : "sum_" + std::to_string(k - 1), "row_" + n};
    add.outputs = {"sum_" + n};
    m.graph.nodes.push_back(add);
  }
  m.graph.outputs = {{"sum_" + std::to_string(kTables - 1), ValueType::tensor(DType::Float, {1, kCols}), {}}};
  SaveOptions so;
  so.shared = &where;
  REDUCE_TRY(save_model(m, dir / "big.onnx", so));
  return load_model(dir / "big.onnx");
}

TEST(BundleWeights, AReproducerOfAModelOfSeveralGigabytesHoldsOnlyTheBytesItReadsAndResumes) {
  TempDir dir;
  auto model = big_model_with_external_weights(dir);
  ASSERT_TRUE(model.ok()) << model.error().message();
  ASSERT_EQ(model->external_data.size(), 1u);
  std::vector<NamedTensor> inputs{{"idx", Tensor::from_vector(DType::Int64, {1}, std::vector<int64_t>{3}).value()}};
  auto refuses_table_17 = std::make_shared<RefusingEngine>(
      [](const Graph&, const Node& n) { return n.op_type == "Gather" && n.inputs[0] == "table_17"; });
  for (const bool resume : {false, true}) {
    const Reduction r = reduce_with(*model, dir / "big.onnx", inputs, refuses_table_17, dir / "out", 0, resume);
    ASSERT_TRUE(r.outcome.report.has_value());
    EXPECT_EQ(r.outcome.report->reduced_nodes, 1u);
    // One 80 MiB table of the 3.1 GiB, in the bundle's own model.data; no link to big.data left.
    const uint64_t bundle = folder_size(r.bundle);
    EXPECT_GE(bundle, kTableBytes);
    EXPECT_LT(bundle, kTableBytes + (1u << 20)) << "resume " << resume;
    for (const auto& e : fs::directory_iterator(r.bundle))
      EXPECT_EQ(e.path().filename().string().find("original"), std::string::npos) << e.path();
    struct stat original {};
    ASSERT_EQ(::stat((dir / "big.data").c_str(), &original), 0);
    EXPECT_EQ(original.st_nlink, 1u) << "a hard link of big.data is left somewhere";
    const auto report = report_json_of(r.bundle);
    EXPECT_EQ(report["bundle_bytes"].get<uint64_t>(), folder_size(r.bundle) - fs::file_size(r.bundle / "report.json") -
                                                          fs::file_size(r.bundle / "report.md") -
                                                          fs::file_size(r.bundle / "bucket.txt"));
    EXPECT_FALSE(report["reduced"]["weights_linked"].get<bool>());
    EXPECT_NE(read_bytes(r.bundle / "report.md").find("weights 80 MB"), std::string::npos);
    auto back = load_model(r.bundle / "model.onnx");
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_EQ(back->external_data_files, std::vector<std::string>{"model.data"});
  }
}

TEST(BundleWeights, TheSearchLinksTheOriginalsDataAndTheFinishedBundleReplacesTheLink) {
  TempDir dir;
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1024] X) => (float[1024] Y) <float[1] W = {0}> { Y = Add(X, W) }
)");
  Initializer& w = m.graph.initializers.at(0);
  w.tensor = Tensor::allocate(DType::Float, {1024}).value();
  SaveOptions external;
  external.weights = SaveOptions::Weights::External;
  ASSERT_TRUE(save_model(m, dir / "m.onnx", external).ok());
  auto loaded = load_model(dir / "m.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  CandidateRun run{*loaded, {{"X", Tensor::allocate(DType::Float, {1024}).value()}}, {}};
  ASSERT_TRUE(write_bundle_model(dir / "out", run).ok());
  EXPECT_TRUE(fs::exists(dir / "out" / "model.original.data"));
  ASSERT_TRUE(write_bundle_model(dir / "out", run, BundleWeights::Own).ok());
  EXPECT_FALSE(fs::exists(dir / "out" / "model.original.data"));
  auto back = load_model(dir / "out" / "model.onnx");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_TRUE(back->external_data_files.empty()) << "4 KB of weights stay inline";
  EXPECT_EQ(first_difference(*loaded, *back), std::nullopt);
}

TEST(BundleWeights, AFolderThatCannotHoldTheModelIsAnErrorNamingIt) {
  TempDir dir;
  testing::write_bytes(dir / "file", "x");
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] X) => (float[2] Y) { Y = Relu(X) }
)");
  CandidateRun run{m, {{"X", Tensor::allocate(DType::Float, {2}).value()}}, {}};
  const Status s = write_bundle_model(dir / "file" / "out", run, BundleWeights::Own);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find((dir / "file" / "out").string()), std::string::npos) << s.error().message();
}

// An embedding table of 128 KB read by a Gather, and a Relu after it.
Model embedding_model() {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64[2] idx) => (float[2, 16] Y)
<float[1, 16] emb = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}>
{
  rows = Gather(emb, idx)
  Y = Relu(rows)
}
)");
  std::vector<float> values(2048 * 16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 97) / 97.0f - 0.25f;
  m.graph.initializers.at(0).tensor = Tensor::from_vector(DType::Float, {2048, 16}, values).value();
  return m;
}

std::vector<NamedTensor> embedding_inputs() {
  return {{"idx", Tensor::from_vector(DType::Int64, {2}, std::vector<int64_t>{5, 7}).value()}};
}

TEST(FilledWeights, AFilledWeightIsStoredAsConstantOfShapeAndTheModelStillFails) {
  TempDir dir;
  const Model m = embedding_model();
  ASSERT_TRUE(save_model(m, dir / "m.onnx").ok());
  auto refuses_gather = std::make_shared<RefusingEngine>([](const Graph&, const Node& n) { return n.op_type == "Gather"; });
  const Reduction r = reduce_with(m, dir / "m.onnx", embedding_inputs(), refuses_gather, dir / "out", std::nullopt);
  ASSERT_TRUE(r.outcome.report.has_value());
  const ReductionReport& report = *r.outcome.report;
  ASSERT_EQ(report.filled_weights.count("emb"), 1u);
  EXPECT_EQ(report.filled_stored_small, std::vector<std::string>{"emb"});
  EXPECT_EQ(report.confirmed, report.confirm_runs);
  EXPECT_LT(fs::file_size(r.bundle / "model.onnx"), 1024u) << "the 128 KB table is stored whole";
  EXPECT_TRUE(check_model_file(r.bundle / "model.onnx").ok());
  auto stored = load_model(r.bundle / "model.onnx");
  ASSERT_TRUE(stored.ok()) << stored.error().message();
  auto prepared = refuses_gather->prepare(*stored);
  ASSERT_FALSE(prepared.ok()) << "the stored reproducer no longer fails";
  EXPECT_NE(prepared.error().message().find("cannot run a Gather"), std::string::npos);
  EXPECT_EQ(report_json_of(r.bundle)["reduced"]["filled_stored_small"], nlohmann::json::array({"emb"}));
  EXPECT_NE(reproducer_part(r.bundle).find("emb: float[2048,16] = ConstantOfShape<value=float[1] = ["), std::string::npos)
      << reproducer_part(r.bundle);
}

TEST(FilledWeights, WhereTheEngineTreatsAComputedWeightDifferentlyItIsStoredWhole) {
  TempDir dir;
  const Model m = embedding_model();
  ASSERT_TRUE(save_model(m, dir / "m.onnx").ok());
  // Refuses a Gather of a constant table only (as engines that fold weights into their kernels do).
  auto refuses_constant_gather = std::make_shared<RefusingEngine>([](const Graph& g, const Node& n) {
    return n.op_type == "Gather" && g.find_initializer(n.inputs[0]) != nullptr;
  });
  const Reduction r = reduce_with(m, dir / "m.onnx", embedding_inputs(), refuses_constant_gather, dir / "out", std::nullopt);
  ASSERT_TRUE(r.outcome.report.has_value());
  const ReductionReport& report = *r.outcome.report;
  ASSERT_EQ(report.filled_weights.count("emb"), 1u);
  EXPECT_TRUE(report.filled_stored_small.empty());
  EXPECT_GT(fs::file_size(r.bundle / "model.onnx"), 2048u * 16 * 4);
  auto stored = load_model(r.bundle / "model.onnx");
  ASSERT_TRUE(stored.ok()) << stored.error().message();
  EXPECT_FALSE(refuses_constant_gather->prepare(*stored).ok());
}

}  // namespace
}  // namespace reduce
