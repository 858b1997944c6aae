// Probe models: a failure is called the engine's (model-independent) only when models that share
// nothing with the user's fail the same way; names, dtypes, ranks and opsets of the model cannot fool it.
#include <gtest/gtest.h>

#include <functional>

#include "core/model_io.h"
#include "engine/engine.h"
#include "oracle/model_independence.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;

// An engine that refuses (or crashes on) the models `refuses` names, and otherwise runs the
// reference, or gives zeros for every output.
class RuleEngine : public Engine {
 public:
  using Rule = std::function<std::optional<Error>(const Model&)>;
  using Zeros = std::function<bool(const Model&)>;
  explicit RuleEngine(Rule refuses, Zeros zeros = nullptr) : refuses_(std::move(refuses)), zeros_(std::move(zeros)) {}
  std::string name() const override { return "rule"; }
  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    if (auto e = refuses_(model)) return *e;
    REDUCE_ASSIGN(auto inner, make_reference_engine(1)->prepare(model));
    return std::unique_ptr<PreparedModel>(new Prepared(std::move(inner), zeros_ && zeros_(model)));
  }

 private:
  class Prepared : public PreparedModel {
   public:
    Prepared(std::unique_ptr<PreparedModel> inner, bool zeros) : inner_(std::move(inner)), zeros_(zeros) {}
    Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options) override {
      RunOptions returned = options;  // every output returned by run(), to be changed before it is handed over
      returned.on_output = nullptr;
      REDUCE_ASSIGN(TensorMap out, inner_->run(inputs, returned));
      if (zeros_)
        for (auto& [name, t] : out) {
          std::vector<float> z(static_cast<size_t>(element_count(t.shape()).value()), 0.0f);
          t = Tensor::from_vector(DType::Float, t.shape(), z).value();
        }
      return out;
    }

   private:
    std::unique_ptr<PreparedModel> inner_;
    bool zeros_;
  };
  Rule refuses_;
  Zeros zeros_;
};

bool has_op(const Model& m, const std::string& op) {
  for (const auto& n : m.graph.nodes)
    if (n.op_type == op) return true;
  return false;
}

bool has_node_named(const Model& m, const std::string& name) {
  for (const auto& n : m.graph.nodes)
    if (n.name == name) return true;
  return false;
}

Error crash() { return Error{{}, "engine crashed", ErrorKind::Crash, 11}; }

// Polygraphy's test models name their nodes onnx_graphsurgeon_node_1, _3, ...
Model graph_surgeon_model() {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
reducable (float[2, 3] X) => (float[2, 3] Y)
{
  a = Relu(X)
  b = Exp(a)
  c = Neg(b)
  Y = Abs(c)
}
)");
  for (size_t k = 0; k < m.graph.nodes.size(); ++k) m.graph.nodes[k].name = "onnx_graphsurgeon_node_" + std::to_string(2 * k + 1);
  return m;
}

std::unique_ptr<Oracle> oracle_for(const Model& m, std::shared_ptr<Engine> engine, std::vector<NamedTensor> inputs) {
  OracleOptions o;
  o.engine = "test";
  o.engine_instance = std::move(engine);
  auto oracle = Oracle::create(m, std::move(inputs), o);
  EXPECT_TRUE(oracle.ok()) << oracle.error().message();
  auto out = std::move(oracle).value();
  const Verdict original = out->evaluate(Candidate::whole(m.graph));
  EXPECT_TRUE(original.fails());
  out->target().set(original.signature);
  return out;
}

std::vector<NamedTensor> x23() {
  return {{"X", Tensor::from_vector(DType::Float, {2, 3}, std::vector<float>{1, -2, 3, -4, 5, -6}).value()}};
}

TEST(ModelIndependence, ProbesShareNoNameTypeOrShapeWithTheModelAndAreExact) {
  const Model m = graph_surgeon_model();
  const auto probes = neutral_probes(m);
  ASSERT_EQ(probes.size(), 2u);
  for (const auto& p : probes) {
    EXPECT_TRUE(check_model_for_engines(p.run.model).ok()) << p.description;
    EXPECT_EQ(p.run.model.ir_version, m.ir_version);
    EXPECT_EQ(p.run.model.opset_imports, m.opset_imports);
    for (const auto& n : p.run.model.graph.nodes) EXPECT_FALSE(has_node_named(m, n.name)) << n.name;
    for (const auto& in : p.run.model.graph.inputs) EXPECT_NE(in.name, "X");
    for (const auto& out : p.run.model.graph.outputs) EXPECT_NE(out.name, "Y");
    // The reference gives exactly the expected values.
    auto prepared = make_reference_engine(1)->prepare(p.run.model);
    ASSERT_TRUE(prepared.ok()) << prepared.error().message();
    TensorMap feed;
    for (const auto& in : p.run.inputs) feed[in.name] = in.tensor;
    auto out = (*prepared)->run(feed);
    ASSERT_TRUE(out.ok()) << out.error().message();
    for (const auto& e : p.run.expected) EXPECT_TRUE(out->at(e.name).equals(e.tensor)) << p.description;
  }
  EXPECT_NE(probes[0].run.model.graph.nodes.size(), probes[1].run.model.graph.nodes.size());
}

// Polygraphy's fake_reduce_checker: fails while a node of a given name is present. The first node's
// name used to be copied into the probe, which then failed too.
TEST(ModelIndependence, AFailureKeyedOnTheFirstNodesNameIsTheModels) {
  const Model m = graph_surgeon_model();
  auto oracle = oracle_for(m, std::make_shared<RuleEngine>([](const Model& model) -> std::optional<Error> {
    if (has_node_named(model, "onnx_graphsurgeon_node_1")) return make_error("REALLY BAD!");
    return std::nullopt;
  }), x23());
  const ModelIndependence p = probe_model_independence(*oracle, nullptr);
  EXPECT_EQ(p.conclusion, ProbeConclusion::ModelDependent);
  EXPECT_EQ(p.probes.size(), 2u);
}

TEST(ModelIndependence, AnEngineThatFailsOnEveryModelFailsOnEveryProbe) {
  const Model m = graph_surgeon_model();
  auto oracle = oracle_for(m, std::make_shared<RuleEngine>([](const Model&) -> std::optional<Error> {
    return make_error("[E] Unknown option: --fp16");
  }), x23());
  const uint64_t before = oracle->statistics().evaluations;
  const ModelIndependence p = probe_model_independence(*oracle, nullptr);
  EXPECT_EQ(p.conclusion, ProbeConclusion::ModelIndependent);
  // Two neutral probes, and the format probe (the model is not at IR 7, opset 13), which fails too.
  EXPECT_EQ(oracle->statistics().evaluations, before + 3);
  ASSERT_EQ(p.probes.size(), 3u);
  for (const auto& r : p.probes) EXPECT_EQ(r.match, SignatureMatch::Same) << r.model;
}

// A message that quotes the failing node's name masks the same way on a probe as on the model.
TEST(ModelIndependence, MessagesQuotingTheProbesNamesMaskLikeTheModels) {
  const Model m = graph_surgeon_model();
  auto oracle = oracle_for(m, std::make_shared<RuleEngine>([](const Model& model) -> std::optional<Error> {
    return make_error("no kernel library for node " + model.graph.nodes.back().name);
  }), x23());
  EXPECT_EQ(probe_model_independence(*oracle, nullptr).conclusion, ProbeConclusion::ModelIndependent);
}

// An older TensorRT crashes on the bug (Softmax) and on every int64 output: the failure depends on
// the model (without the Softmax it passes), whatever the first input's type.
TEST(ModelIndependence, ACrashAlsoGivenByEveryInt64OutputIsNotTakenForTheSetups) {
  const Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
ids (int64[2, 3] ids) => (float[2, 3] Y)
{
  f = Cast<to = 1>(ids)
  Y = Softmax(f)
}
)");
  auto oracle = oracle_for(m, std::make_shared<RuleEngine>([](const Model& model) -> std::optional<Error> {
    for (const auto& out : model.graph.outputs)
      if (out.type.elem_type == static_cast<int32_t>(DType::Int64)) return crash();
    if (has_op(model, "Softmax")) return crash();
    return std::nullopt;
  }), {{"ids", Tensor::from_vector(DType::Int64, {2, 3}, std::vector<int64_t>{1, 2, 3, 4, 5, 6}).value()}});
  EXPECT_EQ(probe_model_independence(*oracle, nullptr).conclusion, ProbeConclusion::ModelDependent);
}

// A bug triggered by a rank-5 input: the probes are rank 2, so the model is reduced (the input
// itself is the reproducer), not called model-independent.
TEST(ModelIndependence, ABugOfTheFirstInputsRankIsTheModels) {
  const Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
rank5 (float[1, 1, 1, 2, 3] X) => (float[1, 1, 1, 2, 3] Y)
{
  Y = Relu(X)
}
)");
  auto oracle = oracle_for(m, std::make_shared<RuleEngine>([](const Model& model) -> std::optional<Error> {
    for (const auto& in : model.graph.inputs)
      if (in.type.dims.size() == 5) return make_error("rank 5 is not supported");
    return std::nullopt;
  }), {{"X", Tensor::from_vector(DType::Float, {1, 1, 1, 2, 3}, std::vector<float>{1, -2, 3, -4, 5, -6}).value()}});
  EXPECT_EQ(probe_model_independence(*oracle, nullptr).conclusion, ProbeConclusion::ModelDependent);
}

// An engine that loads its kernel library at the first real kernel passes an Identity it elides:
// the Add probe fails like the model. Mixed evidence: the session reduces and says so.
TEST(ModelIndependence, AKernelLibraryLoadedAtTheFirstRealKernelIsMixedEvidence) {
  const Model m = graph_surgeon_model();
  auto oracle = oracle_for(m, std::make_shared<RuleEngine>([](const Model& model) -> std::optional<Error> {
    for (const auto& n : model.graph.nodes)
      if (n.op_type != "Identity") return make_error("cannot load libkernels.so");
    return std::nullopt;
  }), x23());
  const ModelIndependence p = probe_model_independence(*oracle, nullptr);
  EXPECT_EQ(p.conclusion, ProbeConclusion::Mixed);
  ASSERT_EQ(p.probes.size(), 2u);
  EXPECT_EQ(p.probes[0].match, SignatureMatch::Pass);
  EXPECT_EQ(p.probes[1].match, SignatureMatch::Same);
  EXPECT_TRUE(p.any_same());
}

// Wrong values: one probe run; an engine whose every answer is wrong (zeros) fails both.
TEST(ModelIndependence, AnEngineThatReturnsZerosForEveryModelIsCaughtOnAMismatch) {
  const Model m = graph_surgeon_model();
  const auto no_error = [](const Model&) { return std::optional<Error>(); };
  auto zeros = oracle_for(m, std::make_shared<RuleEngine>(no_error, [](const Model&) { return true; }), x23());
  ASSERT_EQ(zeros->target().signature().kind, FailureKind::Mismatch);
  EXPECT_EQ(probe_model_independence(*zeros, nullptr).conclusion, ProbeConclusion::ModelIndependent);

  // Wrong values of the model's own Exp: the first probe passes, and the second is not run.
  auto exp = oracle_for(m, std::make_shared<RuleEngine>(no_error, [](const Model& model) { return has_op(model, "Exp"); }), x23());
  const uint64_t before = exp->statistics().evaluations;
  const ModelIndependence p = probe_model_independence(*exp, nullptr);
  EXPECT_EQ(p.conclusion, ProbeConclusion::ModelDependent);
  EXPECT_EQ(exp->statistics().evaluations, before + 1);
}

// An engine that refuses the model's opset fails every probe in that format and passes the Identity
// at IR 7, opset 13: the refusal is named as such.
TEST(ModelIndependence, AnOpsetRefusalIsNamedAsSuch) {
  const Model m = parse_model(R"(
<ir_version: 10, opset_import: ["" : 21]>
newer (float[2, 3] X) => (float[2, 3] Y)
{
  Y = Relu(X)
}
)");
  auto oracle = oracle_for(m, std::make_shared<RuleEngine>([](const Model& model) -> std::optional<Error> {
    for (const auto& o : model.opset_imports)
      if (o.domain.empty() && o.version > 19) return make_error("Unsupported model opset " + std::to_string(o.version));
    return std::nullopt;
  }), x23());
  const ModelIndependence p = probe_model_independence(*oracle, nullptr);
  EXPECT_EQ(p.conclusion, ProbeConclusion::FormatRefused);
  EXPECT_EQ(p.format, "IR version 10, opset 21");
}

}  // namespace
}  // namespace reduce
