// diagnose(): each corpus family's failure is named by the variant that makes it pass (precision,
// fusion, input binding, static batch), on the optimized engine and through a cmd: engine.
#include <gtest/gtest.h>

#include "corpus_model.h"
#include "adapters/engine_spec.h"
#include "oracle/diagnosis.h"
#include "oracle/inputs.h"
#include "test_support.h"

namespace reduce {
namespace {

using Deps = std::vector<std::string>;

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
