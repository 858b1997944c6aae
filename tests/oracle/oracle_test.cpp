// Oracle: comparison rules, recorded reference values, candidate verdicts (signatures: signature_test.cpp).
#include <gtest/gtest.h>

#include "core/half.h"

#include <cmath>
#include <limits>

#include "core/model_io.h"
#include "engine/engine.h"
#include "oracle/layer_comparison.h"
#include "oracle/oracle.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;

Tensor floats(Shape shape, std::vector<float> v) { return Tensor::from_vector(DType::Float, std::move(shape), v).value(); }

// An engine under test: the reference running a copy of the model in which every output of one op
// type is corrupted (+1, or +inf) by an extra node, or that fails to build, or swaps its inputs.
class CorruptingEngine : public Engine {
 public:
  enum class Mode { AddOne, Infinity, Fail, SwapInputs };
  CorruptingEngine(std::string op, Mode mode) : op_(std::move(op)), mode_(mode) {}
  std::string name() const override { return "corrupting"; }
  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    auto copy = std::make_unique<Model>(model);
    bool has_op = false;
    std::vector<Node> extra;
    for (Node& n : copy->graph.nodes) {
      if (n.op_type != op_) continue;
      has_op = true;
      if (mode_ != Mode::AddOne && mode_ != Mode::Infinity) continue;
      const std::string v = n.outputs[0];
      n.outputs[0] = v + "__raw";
      Node add;
      add.op_type = "Add";
      add.inputs = {v + "__raw", "__corruption"};
      add.outputs = {v};
      extra.push_back(add);
    }
    for (auto& e : extra) copy->graph.nodes.push_back(e);
    const float delta = mode_ == Mode::AddOne ? 1.0f : std::numeric_limits<float>::infinity();
    copy->graph.initializers.push_back({"__corruption", Tensor::from_vector(DType::Float, {}, std::vector<float>{delta}).value(), ""});
    if (has_op && mode_ == Mode::Fail)
      return make_error("layer " + model.graph.nodes[0].outputs[0] + " at 0x7ffd1234: unsupported " + op_ + " #17");
    REDUCE_ASSIGN(auto inner, make_reference_engine(1)->prepare(*copy));
    return std::unique_ptr<PreparedModel>(new Prepared(std::move(copy), std::move(inner), has_op && mode_ == Mode::SwapInputs));
  }

 private:
  class Prepared : public PreparedModel {
   public:
    Prepared(std::unique_ptr<Model> m, std::unique_ptr<PreparedModel> inner, bool swap)
        : model_(std::move(m)), inner_(std::move(inner)), swap_(swap) {}
    Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options) override {
      TensorMap feed = inputs;
      if (swap_ && model_->graph.inputs.size() >= 2)
        std::swap(feed[model_->graph.inputs[0].name], feed[model_->graph.inputs[1].name]);
      return inner_->run(feed, options);
    }

   private:
    std::unique_ptr<Model> model_;
    std::unique_ptr<PreparedModel> inner_;
    bool swap_;
  };
  std::string op_;
  Mode mode_;
};

const char* kChain = R"(
<ir_version: 8, opset_import: ["" : 15]>
chain (float[2, 3] X) => (float[2, 3] Y)
{
  a = Relu(X)
  b = Exp(a)
  c = Neg(b)
  Y = Abs(c)
}
)";

std::unique_ptr<Oracle> make_oracle(const Model& m, std::shared_ptr<Engine> engine, RecordOptions record = {}) {
  OracleOptions o;
  o.engine = "test";
  o.engine_instance = std::move(engine);
  o.record = record;
  std::vector<NamedTensor> inputs{{"X", floats({2, 3}, {1, -2, 3, -4, 5, -6})}};
  auto oracle = Oracle::create(m, inputs, o);
  EXPECT_TRUE(oracle.ok()) << oracle.error().message();
  return std::move(oracle).value();
}

TEST(Comparison, ElementTestIsAtolPlusRtolTimesReference) {
  Tolerance tol{0.1, 0.1, ErrorStat::Elemwise};
  // |a-b| <= 0.1 + 0.1*|b|: b=10 allows 1.1, b=0 allows 0.1.
  EXPECT_TRUE(compare_tensors("y", floats({2}, {11.05f, 0.05f}), floats({2}, {10, 0}), tol).passed);
  auto c = compare_tensors("y", floats({2}, {10, 0.2f}), floats({2}, {10, 0}), tol);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.mismatched, 1u);
  EXPECT_EQ(c.first_bad, 1u);
  EXPECT_NEAR(c.ratio, 2.0, 1e-6);
}

TEST(Comparison, NonFiniteWhereReferenceIsFiniteIsItsOwnClass) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  auto c = compare_tensors("y", floats({3}, {inf, nan, 1}), floats({3}, {1, 1, 1}), Tolerance{});
  EXPECT_FALSE(c.passed);
  EXPECT_TRUE(c.is_nonfinite_failure());
  EXPECT_EQ(c.nonfinite_new, 2u);
  EXPECT_EQ(c.nan, 1u);
  EXPECT_EQ(c.inf, 1u);
  // The same non-finite values on both sides agree.
  EXPECT_TRUE(compare_tensors("y", floats({2}, {nan, -inf}), floats({2}, {nan, -inf}), Tolerance{}).passed);
  EXPECT_FALSE(compare_tensors("y", floats({1}, {inf}), floats({1}, {-inf}), Tolerance{}).passed);
}

TEST(Comparison, StatisticsFailOnlyWhenBothAbsoluteAndRelativeExceed) {
  Tolerance tol{0.01, 0.01, ErrorStat::Mean};
  // One large outlier among many exact values: the mean stays small.
  std::vector<float> a(100, 1.0f), b(100, 1.0f);
  a[0] = 1.5f;
  EXPECT_TRUE(compare_tensors("y", floats({100}, a), floats({100}, b), tol).passed);
  tol.stat = ErrorStat::Max;
  EXPECT_FALSE(compare_tensors("y", floats({100}, a), floats({100}, b), tol).passed);
  tol.stat = ErrorStat::Median;
  EXPECT_TRUE(compare_tensors("y", floats({100}, a), floats({100}, b), tol).passed);
}

TEST(Comparison, ShapeDifferenceIsReportedNotCompared) {
  auto c = compare_tensors("y", floats({2}, {1, 2}), floats({1, 2}, {1, 2}), Tolerance{});
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.structural_problem.find("[1,2]"), std::string::npos);
}

TEST(Comparison, Fp16EnginesGetLooserDefaults) {
  auto precision = [](std::string_view spec) { return parse_engine_spec(spec).value().precision(); };
  EXPECT_EQ(default_tolerance(precision("ref")).atol, 1e-4);
  EXPECT_EQ(default_tolerance(precision("opt:fp16,fault=broadcast-batch1")).rtol, 1e-2);
  EXPECT_EQ(default_tolerance(precision("opt:bf16")).atol, 5e-2);
  EXPECT_EQ(default_tolerance(precision("isolated:opt:fp16")).rtol, 1e-2);  // the precision of the wrapped engine
  EXPECT_EQ(default_tolerance(precision("opt:fp16,fp32")).atol, 1e-4);      // the last precision given wins
}

// The defaults follow the outputs' element type: a float16 output 4 FP16 ulps off near 1 (the FP16
// export against ONNX Runtime) passes with an FP32 engine's defaults; given tolerances are the
// user's for every output.
TEST(Comparison, DefaultsFollowTheOutputsElementType) {
  auto halves = [](std::vector<float> v) {
    std::vector<uint16_t> h;
    for (float x : v) h.push_back(float_to_half(x));
    return Tensor::from_vector(DType::Float16, {static_cast<int64_t>(v.size())}, h).value();
  };
  const Tensor expected = halves({1.0f, 0.5f}), actual = halves({1.0039f, 0.5f});
  const Tolerance defaults = default_tolerance(Precision::FP32);
  EXPECT_TRUE(compare_tensors("y", actual, expected, defaults).passed);
  EXPECT_EQ(defaults.for_element_type(DType::Float16).atol, 1e-2);
  EXPECT_EQ(defaults.for_element_type(DType::BFloat16).rtol, 5e-2);
  EXPECT_EQ(defaults.for_element_type(DType::Float).atol, 1e-4);
  // The same difference in float32 is a mismatch with the same defaults.
  EXPECT_FALSE(compare_tensors("y", floats({2}, {1.0039f, 0.5f}), floats({2}, {1.0f, 0.5f}), defaults).passed);
  Tolerance given = defaults;
  given.by_element_type = false;  // --atol/--rtol given
  EXPECT_FALSE(compare_tensors("y", actual, expected, given).passed);
  EXPECT_EQ(describe_element_type_tolerances(given), "");
  EXPECT_EQ(describe_element_type_tolerances(defaults),
            "; float16 outputs atol 0.01 rtol 0.01, bfloat16 outputs atol 0.05 rtol 0.05");
  // An fp16 engine's defaults already cover float16 outputs: only bfloat16 is looser.
  EXPECT_EQ(describe_element_type_tolerances(default_tolerance(Precision::FP16)), "; bfloat16 outputs atol 0.05 rtol 0.05");
}

TEST(RecordedValues, SpillsAboveTheBudgetWithTheSameValues) {
  Model m = parse_model(kChain);
  auto engine = make_reference_engine(1);
  std::vector<NamedTensor> inputs{{"X", floats({2, 3}, {1, -2, 3, -4, 5, -6})}};
  auto all = RecordedValues::record(m, *engine, inputs);
  ASSERT_TRUE(all.ok()) << all.error().message();
  RecordOptions tight;
  tight.memory_budget = 40;  // the input (24 bytes) and not much more
  auto spilled = RecordedValues::record(m, *engine, inputs, tight);
  ASSERT_TRUE(spilled.ok()) << spilled.error().message();
  EXPECT_GT(spilled->bytes_spilled(), 0u);
  EXPECT_LE(spilled->bytes_in_memory(), 40u);
  for (const char* v : {"a", "b", "c", "Y"}) {
    ASSERT_NE(spilled->find(v), nullptr) << v;
    EXPECT_TRUE(spilled->find(v)->equals(*all->find(v))) << v;
  }
}

TEST(RecordedValues, GivenValuesAreRecordedAsGivenAndComparedWithWhatTheReferenceComputes) {
  Model m = parse_model(kChain);
  auto engine = make_reference_engine(1);
  std::vector<NamedTensor> inputs{{"X", floats({2, 3}, {1, -2, 3, -4, 5, -6})}};
  auto computed = RecordedValues::record(m, *engine, inputs);
  ASSERT_TRUE(computed.ok()) << computed.error().message();
  RecordOptions options;
  options.given = {{"a", floats({2, 3}, {9, 9, 9, 9, 9, 9})}};  // an intermediate, as `mark all` saves it
  options.given_source = "golden.json";
  std::vector<std::string> seen;
  options.on_given = [&](const std::string& name, const Tensor& reference, const Tensor& given) {
    seen.push_back(name);
    EXPECT_TRUE(reference.equals(*computed->find("a")));
    EXPECT_TRUE(given.equals(options.given[0].tensor));
  };
  auto recorded = RecordedValues::record(m, *engine, inputs, options);
  ASSERT_TRUE(recorded.ok()) << recorded.error().message();
  EXPECT_EQ(seen, std::vector<std::string>{"a"});
  EXPECT_TRUE(recorded->find("a")->equals(options.given[0].tensor));  // cut inputs get the given value
  EXPECT_TRUE(recorded->find("Y")->equals(*computed->find("Y")));     // the rest the reference's
  // A given value of another shape than the reference computes is an error naming the file.
  options.given = {{"a", floats({3, 2}, {1, 2, 3, 4, 5, 6})}};
  auto wrong = RecordedValues::record(m, *engine, inputs, options);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().message(), "golden.json: 'a' is float[3,2] but the model computes float[2,3]");
}

TEST(Oracle, OriginalMismatchIsFoundAndCandidatesAreFedRecordedValues) {
  Model m = parse_model(kChain);
  auto oracle = make_oracle(m, std::make_shared<CorruptingEngine>("Exp", CorruptingEngine::Mode::AddOne));
  Verdict original = oracle->evaluate(Candidate::whole(m.graph));
  EXPECT_EQ(original.signature.kind, FailureKind::Mismatch);
  oracle->target().set(original.signature);
  // Just the Exp node: its input is the recorded Relu output (not a fresh random value).
  Candidate only_exp{{1}, {}, {}, {}, {}, {}};
  auto run = oracle->materialize(only_exp);
  ASSERT_TRUE(run.ok()) << run.error().message();
  ASSERT_EQ(run->inputs.size(), 1u);
  EXPECT_EQ(run->inputs[0].name, "a");
  EXPECT_TRUE(run->inputs[0].tensor.shares_storage_with(*oracle->recorded().find("a")));  // not copied
  EXPECT_TRUE(run->expected[0].tensor.shares_storage_with(*oracle->recorded().find("b")));
  EXPECT_EQ(oracle->target().classify(oracle->evaluate(only_exp)), SignatureMatch::Same);
  // Without the Exp node the engine agrees.
  EXPECT_EQ(oracle->target().classify(oracle->evaluate(Candidate{{2, 3}, {}, {}, {}, {}, {}})), SignatureMatch::Pass);
}

TEST(Oracle, RepeatedCandidatesAreAnsweredFromTheCache) {
  Model m = parse_model(kChain);
  auto oracle = make_oracle(m, std::make_shared<CorruptingEngine>("Exp", CorruptingEngine::Mode::AddOne));
  Candidate c{{1, 2}, {}, {}, {}, {}, {}};
  Verdict first = oracle->evaluate(c);
  Verdict second = oracle->evaluate(c);
  EXPECT_FALSE(first.cache_hit);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.signature.kind, first.signature.kind);
  EXPECT_EQ(oracle->statistics().evaluations, 1u);
  EXPECT_EQ(oracle->statistics().cache_hits, 1u);
  EXPECT_NE(candidate_hash(c), candidate_hash(Candidate{{1, 2}, {"a"}, {}, {}, {}, {}}));
}

TEST(Oracle, TheOriginalIsTheCandidateListingEveryNode) {
  Model m = parse_model(kChain);
  auto oracle = make_oracle(m, std::make_shared<CorruptingEngine>("Exp", CorruptingEngine::Mode::AddOne));
  EXPECT_FALSE(oracle->evaluate(Candidate::whole(m.graph)).cache_hit);
  Candidate listed;
  listed.nodes = {0, 1, 2, 3};  // the reducer's start: one cache entry with the original's check
  EXPECT_TRUE(oracle->evaluate(listed).cache_hit);
  EXPECT_EQ(oracle->statistics().evaluations, 1u);
  // No node is no shorthand for every node: such a candidate is not runnable.
  EXPECT_TRUE(oracle->evaluate(Candidate{}).invalid);
}

TEST(Oracle, OutputsOfAFailingCandidateAreKeptForItsBundle) {
  Model m = parse_model(kChain);
  auto oracle = make_oracle(m, std::make_shared<CorruptingEngine>("Exp", CorruptingEngine::Mode::AddOne));
  Candidate failing{{1, 2}, {}, {}, {}, {}, {}}, passing{{2, 3}, {}, {}, {}, {}, {}};
  ASSERT_EQ(oracle->evaluate(failing).signature.kind, FailureKind::Mismatch);
  ASSERT_FALSE(oracle->evaluate(passing).signature.fails());
  TensorMap fresh;
  ASSERT_EQ(oracle->evaluate(failing, nullptr, &fresh).signature.kind, FailureKind::Mismatch);
  EXPECT_EQ(oracle->statistics().evaluations, 2u);  // the failing run's outputs were kept
  TensorMap again;
  oracle->evaluate(passing, nullptr, &again);       // passing runs keep nothing: the engine runs
  EXPECT_EQ(oracle->statistics().evaluations, 3u);
  EXPECT_FALSE(again.empty());
  // The kept outputs are those the engine returned.
  auto rerun = make_oracle(m, std::make_shared<CorruptingEngine>("Exp", CorruptingEngine::Mode::AddOne));
  TensorMap direct;
  rerun->evaluate(failing, nullptr, &direct);
  ASSERT_EQ(fresh.size(), direct.size());
  for (const auto& [name, t] : direct) EXPECT_TRUE(fresh.at(name).equals(t)) << name;
}

TEST(Oracle, InfinityWhereTheReferenceIsFiniteIsNonFinite) {
  Model m = parse_model(kChain);
  auto oracle = make_oracle(m, std::make_shared<CorruptingEngine>("Neg", CorruptingEngine::Mode::Infinity));
  EXPECT_EQ(oracle->evaluate(Candidate::whole(m.graph)).signature.kind, FailureKind::NonFinite);
}

TEST(Oracle, EngineErrorsAreNormalizedSoCandidatesMatch) {
  Model m = parse_model(kChain);
  auto oracle = make_oracle(m, std::make_shared<CorruptingEngine>("Neg", CorruptingEngine::Mode::Fail));
  Verdict original = oracle->evaluate(Candidate::whole(m.graph));
  ASSERT_EQ(original.signature.kind, FailureKind::Error);
  oracle->target().set(original.signature);
  Verdict smaller = oracle->evaluate(Candidate{{2}, {}, {}, {}, {}, {}});
  EXPECT_NE(smaller.signature.message, original.signature.message);  // other node name, same failure
  EXPECT_EQ(oracle->target().classify(smaller), SignatureMatch::Same);
}

TEST(Oracle, FrozenCutValuesBecomeInitializers) {
  Model m = parse_model(kChain);
  auto oracle = make_oracle(m, std::make_shared<CorruptingEngine>("Exp", CorruptingEngine::Mode::AddOne));
  auto run = oracle->materialize(Candidate{{1}, {"a"}, {}, {}, {}, {}});
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_TRUE(run->inputs.empty());
  ASSERT_NE(run->model.graph.find_initializer("a"), nullptr);
}

// W reaches the Mul through an Identity and a Reshape; R is random; D is an input with a default.
const char* kConstantFed = R"(
<ir_version: 8, opset_import: ["" : 15]>
fed (float[2, 3] X, float[2, 3] D) => (float[2, 3] Y, float[2, 3] Z)
<float[6] W = {1, 2, 3, 4, 5, 6}, int64[2] S = {2, 3}, float[2, 3] D = {0, 0, 0, 0, 0, 0}>
{
  w = Identity(W)
  ws = Reshape(w, S)
  r = RandomUniformLike(ws)
  rd = Add(r, ws)
  dd = Add(D, ws)
  Y = Mul(X, ws)
  Z = Add(dd, rd)
}
)";

TEST(Oracle, ValuesComputedFromWeightsAloneAreConstantFed) {
  Model m = parse_model(kConstantFed);
  const auto fed = CandidateMaterializer::constant_fed_values(m.graph);
  EXPECT_EQ(fed, (std::unordered_set<std::string>{"w", "ws"}));  // not r (random), rd, dd (D is an input)
}

TEST(Oracle, ACutConstantFedValueIsAWeightOfTheCandidateNotAnInput) {
  // kConstantFed without its random op (the reference runs none).
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
fed (float[2, 3] X, float[2, 3] D) => (float[2, 3] Y, float[2, 3] Z)
<float[6] W = {1, 2, 3, 4, 5, 6}, int64[2] S = {2, 3}, float[2, 3] D = {0, 0, 0, 0, 0, 0}>
{
  w = Identity(W)
  ws = Reshape(w, S)
  Y = Mul(X, ws)
  Z = Add(D, ws)
}
)");
  OracleOptions o;
  o.engine = "test";
  o.engine_instance = std::make_shared<CorruptingEngine>("Mul", CorruptingEngine::Mode::AddOne);
  std::vector<NamedTensor> inputs{{"X", floats({2, 3}, {1, -2, 3, -4, 5, -6})}, {"D", floats({2, 3}, {0, 0, 0, 0, 0, 0})}};
  auto oracle = Oracle::create(m, inputs, o);
  ASSERT_TRUE(oracle.ok()) << oracle.error().message();
  auto run = (*oracle)->materialize(Candidate{{2}, {}, {}, {}, {}, {}});  // the Mul alone
  ASSERT_TRUE(run.ok()) << run.error().message();
  ASSERT_EQ(run->inputs.size(), 1u);
  EXPECT_EQ(run->inputs[0].name, "X");
  const Initializer* ws = run->model.graph.find_initializer("ws");
  ASSERT_NE(ws, nullptr);
  EXPECT_EQ(ws->tensor.shape(), (Shape{2, 3}));
  EXPECT_FLOAT_EQ(ws->tensor.data<float>()[5], 6.0f);
  EXPECT_EQ((*oracle)->evaluate(Candidate{{2}, {}, {}, {}, {}, {}}).signature.kind, FailureKind::Mismatch);
}

TEST(Oracle, ReducedInputShapesRerunTheReference) {
  Model m = parse_model(kChain);
  auto oracle = make_oracle(m, std::make_shared<CorruptingEngine>("Exp", CorruptingEngine::Mode::AddOne));
  Candidate c{{1, 2}, {}, {}, {{"a", Shape{1, 2}}}, {}, {}};
  auto run = oracle->materialize(c);
  ASSERT_TRUE(run.ok()) << run.error().message();
  ASSERT_EQ(run->inputs[0].tensor.shape(), (Shape{1, 2}));
  ASSERT_EQ(run->expected[0].tensor.shape(), (Shape{1, 2}));
  // relu(X) row 0 = {1, 0}; c = -exp(a)
  EXPECT_FLOAT_EQ(run->expected[0].tensor.data<float>()[0], -std::exp(1.0f));
  EXPECT_EQ(oracle->evaluate(c).signature.kind, FailureKind::Mismatch);
}

TEST(Oracle, FilledWeightsAndDroppedAttributesRerunTheReference) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] X) => (float[2, 3] y)
<float[3] w = {3.0, 4.0, 5.0}>
{
  a = Mul(X, w)
  y = LeakyRelu<alpha = 0.5>(a)
}
)");
  auto oracle = make_oracle(m, std::make_shared<CorruptingEngine>("Mul", CorruptingEngine::Mode::AddOne));
  Candidate c{{0, 1}, {}, {}, {}, {{"w", 1.0}}, {{1, "alpha"}}};
  auto run = oracle->materialize(c);
  ASSERT_TRUE(run.ok()) << run.error().message();
  const Initializer* w = run->model.graph.find_initializer("w");
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(w->tensor.equals(floats({3}, {1, 1, 1})));
  EXPECT_EQ(run->model.graph.nodes[1].attribute("alpha"), nullptr);
  // Expected values come from the simplified model: X[0][1] = -2, times 1, LeakyRelu's default
  // slope 0.01 (the recorded value was -2 * 4 * 0.5).
  EXPECT_FLOAT_EQ(run->expected[0].tensor.data<float>()[1], -0.02f);
  EXPECT_NE(candidate_hash(c), candidate_hash(Candidate{{0, 1}, {}, {}, {}, {{"w", 0.0}}, {{1, "alpha"}}}));
  // Filling what is not a kept initializer is refused, not ignored.
  EXPECT_FALSE(oracle->materialize(Candidate{{1}, {}, {}, {}, {{"w", 1.0}}, {}}).ok());
}

TEST(Oracle, CandidatesFillingAWeightAlikeShareOneTensorAndZerosAreNotResident) {
  // fill-weights on a model with a 64 MiB weight: two candidates in flight (-j 2) that fill it with
  // the same value hold one copy, and zeros (the first value tried) are never written.
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 4096] X, float[4096, 4096] w) => (float[1, 4096] y)
{
  y = MatMul(X, w)
}
)");
  m.graph.inputs.pop_back();
  Tensor w = Tensor::allocate_uninitialized(DType::Float, {4096, 4096}).value();
  for (size_t i = 0; i < w.elements(); ++i) w.mutable_data<float>()[i] = static_cast<float>(i % 7) * 0.25f;
  m.graph.initializers.push_back({"w", w, {}});
  OracleOptions o;
  o.engine = "ref";
  std::vector<float> x(4096, 0.5f);
  auto oracle = Oracle::create(m, {{"X", Tensor::from_vector(DType::Float, {1, 4096}, x).value()}}, o);
  ASSERT_TRUE(oracle.ok()) << oracle.error().message();
  const Candidate ones{{0}, {}, {}, {}, {{"w", 1.0}}, {}};
  auto first = (*oracle)->materialize(ones);
  auto second = (*oracle)->materialize(ones);
  ASSERT_TRUE(first.ok() && second.ok());
  const Tensor& a = first->model.graph.find_initializer("w")->tensor;
  const Tensor& b = second->model.graph.find_initializer("w")->tensor;
  EXPECT_TRUE(a.shares_storage_with(b));
  EXPECT_EQ(a.data<float>()[12345], 1.0f);
  EXPECT_FLOAT_EQ(first->expected[0].tensor.data<float>()[7], 2048.0f);
  // Once no candidate holds the fill, the next one gets a fresh tensor with the same values.
  first = make_error("dropped");
  second = make_error("dropped");
  auto third = (*oracle)->materialize(Candidate{{0}, {}, {}, {}, {{"w", -0.0}}, {}});
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(std::signbit(third->model.graph.find_initializer("w")->tensor.data<float>()[0])) << "-0 is not +0";

  if (!testing::reading_untouched_memory_is_free()) GTEST_SKIP() << "this kernel maps no shared zero page";
  const size_t before = testing::resident_bytes();
  auto zeros = (*oracle)->materialize(Candidate{{0}, {}, {}, {}, {{"w", 0.0}}, {}});
  ASSERT_TRUE(zeros.ok());
  const Tensor& z = zeros->model.graph.find_initializer("w")->tensor;
  EXPECT_EQ(z.data<float>()[4096 * 4096 - 1], 0.0f);
  EXPECT_FALSE(std::signbit(z.data<float>()[0]));
  EXPECT_LT(testing::resident_bytes(), before + (size_t{16} << 20)) << "the zeros were written";
}

// A model the ONNX checker refuses (an attribute Relu does not have) that the reference still runs.
const char* kUncheckable = R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2, 3] X) => (float[2, 3] Y)
{
  Y = Relu <no_such_attribute = 1> (X)
}
)";

Verdict verdict_on(const Model& m, const std::string& spec) {
  OracleOptions o;
  o.engine = spec;
  o.environment.worker_program = std::string(REDUCE_BINARY_DIR) + "/reduce";
  auto oracle = Oracle::create(m, {{"X", floats({2, 3}, {1, -2, 3, -4, 5, -6})}}, o);
  EXPECT_TRUE(oracle.ok()) << oracle.error().message();
  return oracle.ok() ? (*oracle)->evaluate(Candidate::whole(m.graph)) : Verdict{};
}

TEST(Oracle, ExternalEnginesGetOnlyModelsTheOnnxCheckerAccepts) {
  Model m = parse_model(kUncheckable);
  // The command would fail if it ran: the checker refuses the candidate first.
  const Verdict cmd = verdict_on(m, "cmd:false {model} {inputs} {outputs}");
  EXPECT_TRUE(cmd.invalid);
  EXPECT_EQ(cmd.invalid_reason.rfind("ONNX checker:", 0), 0u) << cmd.invalid_reason;
  // Isolated or not, the engine reading the model is the same command: the same gate.
  const Verdict isolated = verdict_on(m, "isolated:cmd:false {model} {inputs} {outputs}");
  EXPECT_TRUE(isolated.invalid);
  EXPECT_EQ(isolated.invalid_reason, cmd.invalid_reason);
  // Our own engines run what the reference runs.
  for (const char* own : {"ref", "opt"}) {
    const Verdict v = verdict_on(m, own);
    EXPECT_FALSE(v.invalid) << own << ": " << v.invalid_reason;
    EXPECT_EQ(v.signature.kind, FailureKind::None) << own;
  }
}

// The spec is parsed once, when the oracle is made, and handed out (spec(), reference_spec()); a run
// on other settings is given the spec to run with, which an engine given as an instance cannot take.
TEST(Oracle, TheSpecIsParsedOnceAndARunOnOtherSettingsIsGivenItsSpec) {
  Model m = parse_model(kChain);
  OracleOptions o;
  o.engine = "opt:fp16";
  auto oracle = Oracle::create(m, {{"X", floats({2, 3}, {1, -2, 3, -4, 5, -6})}}, o);
  ASSERT_TRUE(oracle.ok()) << oracle.error().message();
  ASSERT_NE((*oracle)->spec(), nullptr);
  EXPECT_EQ(to_string(*(*oracle)->spec()), "opt:fp16");
  EXPECT_EQ((*oracle)->spec()->precision(), Precision::FP16);
  EXPECT_EQ((*oracle)->reference_spec().kind, EngineKind::Ref);
  auto whole = (*oracle)->materialize(Candidate::whole(m.graph));
  ASSERT_TRUE(whole.ok()) << whole.error().message();
  const Verdict on_ref = (*oracle)->evaluate_probe(*whole, nullptr, EngineSpec{});
  EXPECT_FALSE(on_ref.invalid) << on_ref.invalid_reason;
  EXPECT_FALSE(on_ref.signature.fails()) << on_ref.signature.to_string();

  auto instance = make_oracle(m, std::make_shared<CorruptingEngine>("Exp", CorruptingEngine::Mode::AddOne));
  auto run = instance->materialize(Candidate::whole(m.graph));
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_EQ(instance->evaluate_probe(*run).signature.kind, FailureKind::Mismatch);
  const Verdict varied = instance->evaluate_probe(*run, nullptr, EngineSpec{});
  EXPECT_TRUE(varied.invalid);
  EXPECT_EQ(varied.invalid_reason, "an engine given as an instance takes no other settings");
}

TEST(Oracle, LayerwiseComparisonFindsTheFirstDivergingValue) {
  Model m = parse_model(kChain);
  auto oracle = make_oracle(m, std::make_shared<CorruptingEngine>("Exp", CorruptingEngine::Mode::AddOne));
  auto layers = compare_layers(*oracle);
  ASSERT_TRUE(layers.ok()) << layers.error().message();
  ASSERT_EQ(layers->size(), 4u);
  EXPECT_TRUE((*layers)[0].comparison.passed);
  EXPECT_FALSE((*layers)[1].comparison.passed);
  EXPECT_EQ((*layers)[1].value, "b");
}

TEST(Oracle, InputBindingDiagnosisFindsTheSwappedInputs) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[3] A, float[3] B) => (float[3] Y)
{
  Y = Sub(A, B)
}
)");
  OracleOptions o;
  o.engine = "test";
  o.engine_instance = std::make_shared<CorruptingEngine>("Sub", CorruptingEngine::Mode::SwapInputs);
  std::vector<NamedTensor> inputs{{"A", floats({3}, {1, 2, 3})}, {"B", floats({3}, {0, 5, 1})}};
  auto oracle = Oracle::create(m, inputs, o);
  ASSERT_TRUE(oracle.ok());
  EXPECT_EQ((*oracle)->evaluate(Candidate::whole(m.graph)).signature.kind, FailureKind::Mismatch);
  auto mapping = diagnose_input_binding(**oracle);
  ASSERT_TRUE(mapping.has_value());
  EXPECT_EQ(mapping->at("A"), "B");
  EXPECT_EQ(mapping->at("B"), "A");
}

}  // namespace
}  // namespace reduce
