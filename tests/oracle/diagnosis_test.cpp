// diagnose(): each corpus family's failure is named by the variant that makes it pass (precision,
// fusion, input binding, static batch), on the optimized engine and through a cmd: engine.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "corpus_model.h"
#include "adapters/engine_spec.h"
#include "oracle/diagnosis.h"
#include "oracle/inputs.h"
#include "test_support.h"

namespace reduce {
namespace {

using Deps = std::vector<std::string>;

// An engine whose float outputs are NaN when some input value is over 0.5 in magnitude and off by
// one otherwise: smaller inputs do not make it pass, they make it fail another way.
class LargeInputsNanEngine : public Engine {
 public:
  std::string name() const override { return "large-inputs-nan"; }
  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    REDUCE_ASSIGN(auto inner, make_reference_engine(1)->prepare(model));
    return std::unique_ptr<PreparedModel>(new Prepared(std::move(inner)));
  }

 private:
  class Prepared : public PreparedModel {
   public:
    explicit Prepared(std::unique_ptr<PreparedModel> inner) : inner_(std::move(inner)) {}
    Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options) override {
      bool large = false;
      for (const auto& [name, t] : inputs)
        if (t.dtype() == DType::Float)
          for (float x : t.data<float>()) large |= std::fabs(x) > 0.5f;
      RunOptions returned = options;
      returned.on_output = nullptr;
      REDUCE_ASSIGN(TensorMap out, inner_->run(inputs, returned));
      for (auto& [name, t] : out) {
        if (t.dtype() != DType::Float) continue;
        std::vector<float> v(t.data<float>().begin(), t.data<float>().end());
        for (float& x : v) x = large ? std::numeric_limits<float>::quiet_NaN() : x + 1.0f;
        t = Tensor::from_vector(DType::Float, t.shape(), v).value();
      }
      return out;
    }

   private:
    std::unique_ptr<PreparedModel> inner_;
  };
};

// The diagnosis of Y = Relu(X) on LargeInputsNanEngine, with inputs that give NaN.
Diagnosis diagnose_large_inputs_nan(std::vector<std::string> fail_regexes = {}) {
  Model m = testing::parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 4] X) => (float[1, 4] Y)
{
  Y = Relu (X)
}
)");
  OracleOptions options;
  options.engine = "large-inputs-nan";
  options.engine_instance = std::make_shared<LargeInputsNanEngine>();
  options.fail_regexes = std::move(fail_regexes);
  std::vector<NamedTensor> inputs{{"X", Tensor::from_vector(DType::Float, {1, 4}, std::vector<float>{0.9f, -0.8f, 0.7f, 0.6f}).value()}};
  auto oracle = Oracle::create(m, std::move(inputs), options);
  EXPECT_TRUE(oracle.ok()) << oracle.error().message();
  if (!oracle.ok()) return {};
  Verdict v = (*oracle)->evaluate(Candidate::whole(m.graph));
  EXPECT_EQ(v.signature.kind, FailureKind::NonFinite) << v.signature.to_string();
  (*oracle)->target().set(v.signature);
  auto d = diagnose(**oracle);
  EXPECT_TRUE(d.ok());
  return d.ok() ? *d : Diagnosis{};
}

const DiagnosisLine* line_of(const Diagnosis& d, const std::string& dependency) {
  for (const auto& l : d.lines)
    if (l.dependency == dependency) return &l;
  return nullptr;
}

// The diagnosis of `model` on `spec` with the oracle's seeded inputs (or `inputs`).
Diagnosis diagnose_on(const Model& model, const std::string& spec, std::vector<NamedTensor> inputs = {}) {
  if (inputs.empty()) {
    auto made = make_random_inputs(model.graph, {});
    EXPECT_TRUE(made.ok()) << made.error().message();
    if (made.ok()) inputs = std::move(*made);
  }
  OracleOptions options;
  options.engine = spec;
  options.tolerance = default_tolerance(parse_engine_spec(spec)->precision());
  auto oracle = Oracle::create(model, std::move(inputs), options);
  EXPECT_TRUE(oracle.ok()) << oracle.error().message();
  if (!oracle.ok()) return {};
  Verdict v = (*oracle)->evaluate(Candidate::whole(model.graph));
  EXPECT_TRUE(v.signature.fails()) << spec;
  (*oracle)->target().set(v.signature);
  auto d = diagnose(**oracle);
  EXPECT_TRUE(d.ok());
  return d.ok() ? *d : Diagnosis{};
}

Deps corpus_dependencies(std::string_view fault) {
  const corpus::Family* family = corpus::find_family(fault);
  if (!family) family = corpus::find_precision_family(fault);
  EXPECT_NE(family, nullptr) << fault;
  if (!family) return {};
  const corpus::GeneratedModel g = corpus::generate(*family, 10, corpus::kDefaultSeed);
  return diagnose_on(g.model, family->engine).depends_on();
}

TEST(Diagnosis, AStaticBatchOneFaultPassesWithADynamicBatchAndWithBatchTwo) {
  EXPECT_EQ(corpus_dependencies("broadcast-batch1"), (Deps{"static batch", "batch 1"}));
}

TEST(Diagnosis, FusedKernelFaultsPassWhenIntermediatesAreOutputs) {
  EXPECT_EQ(corpus_dependencies("attention-unstable-softmax"), (Deps{"fusion"}));
  EXPECT_EQ(corpus_dependencies("layernorm-drop-eps"), (Deps{"fusion"}));
  EXPECT_EQ(corpus_dependencies("conv-bn-fold-eps"), (Deps{"fusion"}));
}

TEST(Diagnosis, Fp16FailuresPassWithEveryFloatNodeInFp32) {
  EXPECT_EQ(corpus_dependencies("fp16-overflow"), (Deps{"precision"}));
  EXPECT_EQ(corpus_dependencies("cast-fp16-conflict"), (Deps{"precision"}));
  // The scaled LayerNorm overflows from the data's magnitude: 10x smaller inputs pass. The others
  // overflow from their weights (a logit bias, an offset of about 100) whatever the inputs.
  EXPECT_EQ(corpus_dependencies("fp16-layernorm-square"), (Deps{"precision", "input range"}));
  EXPECT_EQ(corpus_dependencies("fp16-softmax-no-max"), (Deps{"precision"}));
  EXPECT_EQ(corpus_dependencies("fp16-reducesum"), (Deps{"precision"}));
}

TEST(Diagnosis, SwappedInputsAreNamedByTheBindingVariant) {
  EXPECT_EQ(corpus_dependencies("input-binding-order"), (Deps{"input binding"}));
}

TEST(Diagnosis, AKernelBugDependsOnNoneOfTheVariants) {
  EXPECT_EQ(corpus_dependencies("resize-half-pixel"), Deps{});
}

TEST(Diagnosis, AnOverflowCausedByTheInputsDependsOnTheirRange) {
  Model m = testing::parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 4] X) => (float[1, 4] Y)
{
  sq = Mul (X, X)
  Y = Sqrt (sq)
}
)");
  const std::vector<NamedTensor> large = {
      {"X", Tensor::from_vector(DType::Float, {1, 4}, std::vector<float>{300, 310, 320, 330}).value()}};
  EXPECT_EQ(diagnose_on(m, "opt:fp16", large).depends_on(), (Deps{"precision", "input range"}));
}

// 10x smaller inputs give an off-by-one instead of NaN: that neither shows nor rules out a
// dependency on the input range, so it is not "does not depend on the input range".
TEST(Diagnosis, AVariantThatFailsAnotherWayIsInconclusiveNotAFail) {
  const Diagnosis d = diagnose_large_inputs_nan();
  const DiagnosisLine* range = line_of(d, "input range");
  ASSERT_NE(range, nullptr);
  EXPECT_EQ(range->outcome, VariantOutcome::FailsOtherwise);
  EXPECT_EQ(range->verdict.rfind("fails otherwise (", 0), 0u) << range->verdict;
  EXPECT_EQ(range->meaning.rfind("inconclusive", 0), 0u) << range->meaning;
  EXPECT_EQ(d.inconclusive(), (Deps{"input range"}));
  // The batch variants keep the inputs' magnitude: the same NaN, a plain fail.
  const DiagnosisLine* dynamic = line_of(d, "static batch");
  ASSERT_NE(dynamic, nullptr);
  EXPECT_EQ(dynamic->outcome, VariantOutcome::Fails);
  EXPECT_EQ(dynamic->verdict, "fails (same failure)");
  EXPECT_EQ(d.depends_on(), Deps{});
}

// With --fail-regex the failure is what the patterns match: an off-by-one whose message matches
// is the same failure as the NaN, one that does not match is another.
TEST(Diagnosis, TheFailRegexDecidesWhichVariantsFailTheSameWay) {
  const Diagnosis any = diagnose_large_inputs_nan({"non-finite|differ"});
  ASSERT_NE(line_of(any, "input range"), nullptr);
  EXPECT_EQ(line_of(any, "input range")->outcome, VariantOutcome::Fails) << line_of(any, "input range")->verdict;
  EXPECT_EQ(line_of(any, "input range")->verdict, "fails (same failure)");
  const Diagnosis nan_only = diagnose_large_inputs_nan({"non-finite"});
  ASSERT_NE(line_of(nan_only, "input range"), nullptr);
  EXPECT_EQ(line_of(nan_only, "input range")->outcome, VariantOutcome::FailsOtherwise);
}

TEST(Diagnosis, EnginesWithoutPerNodePrecisionSayNotApplicable) {
  const corpus::GeneratedModel g = corpus::generate(*corpus::find_family("broadcast-batch1"), 10, corpus::kDefaultSeed);
  const Diagnosis d = diagnose_on(g.model, "opt:fault=broadcast-batch1");
  ASSERT_FALSE(d.lines.empty());
  EXPECT_EQ(d.lines[0].dependency, "precision");
  EXPECT_EQ(d.lines[0].outcome, VariantOutcome::NotApplicable);
  EXPECT_EQ(d.lines[0].verdict.rfind("n/a", 0), 0u);
  for (const auto& l : d.lines) EXPECT_FALSE(l.meaning.empty()) << l.dependency;
}

TEST(Diagnosis, CommandEnginesRunEveryVariantAsAModelFile) {
  // The command is `reduce run` on the optimized engine: an external engine that only sees files.
  const std::string reduce = std::string(REDUCE_BINARY_DIR) + "/reduce";
  const corpus::GeneratedModel batch = corpus::generate(*corpus::find_family("broadcast-batch1"), 10, corpus::kDefaultSeed);
  const std::string run = "cmd:" + reduce + " run {model} --inputs {inputs} --save-outputs {outputs} --engine ";
  EXPECT_EQ(diagnose_on(batch.model, run + "opt:fault=broadcast-batch1").depends_on(), (Deps{"static batch", "batch 1"}));
  // With {fp32_nodes_file}, a command takes per-node precision: the overflow passes in FP32.
  const corpus::GeneratedModel overflow = corpus::generate(*corpus::find_family("fp16-overflow"), 10, corpus::kDefaultSeed);
  const std::string pinned =
      "cmd:sh -c 'if test -s \"$4\"; then e=\"opt:fp16,fp32=@$4\"; else e=opt:fp16; fi; "
      "exec \"$0\" run \"$1\" --inputs \"$2\" --save-outputs \"$3\" --engine \"$e\"' " +
      reduce + " {model} {inputs} {outputs} {fp32_nodes_file}";
  EXPECT_EQ(diagnose_on(overflow.model, pinned).depends_on(), (Deps{"precision"}));
}

}  // namespace
}  // namespace reduce
