// What `reduce` decides before and around a search, called without the binary: the sample a command
// goes on with, flattening control flow only when the model fails, and the tolerance sweep.
#include <gtest/gtest.h>

#include "cli/fault_models.h"
#include "oracle/inputs.h"
#include "session/control_flow.h"
#include "precision/precision.h"
#include "oracle/samples.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;

// Seeded inputs of the model, uniform in [-r, r).
InputSample sample(const Model& m, double r, uint64_t seed = 0) {
  RandomInputOptions o;
  o.seed = seed;
  o.ranges["X"] = {-r, r};
  auto inputs = make_random_inputs(m.graph, o);
  EXPECT_TRUE(inputs.ok());
  return {"range " + std::to_string(r), std::move(*inputs)};
}

OracleOptions fp16() {
  OracleOptions o;
  o.engine = "opt:fp16";
  return o;
}

// kSquareOverflow: |X| < 0.1 passes on opt:fp16, |X| < 1 overflows the square.
TEST(Samples, TheFirstFailingSampleIsChosenAndLaterOnesAreNotChecked) {
  const Model m = parse_model(testing::kSquareOverflow);
  std::vector<InputSample> samples{sample(m, 0.1), sample(m, 1), sample(m, 0.1, 7)};
  auto out = create_sample_oracles(m, "norm.onnx", std::move(samples), {}, fp16(), SampleUse::FirstFailing, nullptr);
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->chosen, 1u);
  EXPECT_EQ(out->failing(), std::vector<size_t>{1});
  ASSERT_TRUE(out->verdicts[0] && out->verdicts[1]);
  EXPECT_FALSE(out->verdicts[0]->fails());
  EXPECT_FALSE(out->verdicts[2]) << "a sample after the first failing one is not checked";
  EXPECT_FALSE(out->oracles[0]) << "a passing sample's oracle is dropped";
  EXPECT_EQ(out->kept().size(), 1u);
  EXPECT_EQ(&out->main(), out->oracles[1].get());
}

TEST(Samples, KeepAllChecksAndKeepsEverySampleAndCheckAllEverySampleOnly) {
  const Model m = parse_model(testing::kSquareOverflow);
  auto keep = create_sample_oracles(m, "norm.onnx", {sample(m, 0.1), sample(m, 1), sample(m, 1, 3)}, {}, fp16(),
                                    SampleUse::KeepAll, nullptr);
  ASSERT_TRUE(keep.ok());
  EXPECT_EQ(keep->chosen, 1u);
  EXPECT_EQ(keep->failing(), (std::vector<size_t>{1, 2}));
  ASSERT_EQ(keep->kept().size(), 3u);
  EXPECT_EQ(keep->kept()[0], keep->oracles[1].get()) << "the chosen one first";

  auto all = create_sample_oracles(m, "norm.onnx", {sample(m, 0.1), sample(m, 1), sample(m, 1, 3)}, {}, fp16(),
                                   SampleUse::CheckAll, nullptr);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->failing(), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(all->kept().size(), 1u);
}

TEST(Samples, WithoutAFailingSampleTheFirstIsChosenAndASingleSampleIsNotChecked) {
  const Model m = parse_model(testing::kSquareOverflow);
  auto passing = create_sample_oracles(m, "norm.onnx", {sample(m, 0.1), sample(m, 0.1, 7)}, {}, fp16(),
                                       SampleUse::FirstFailing, nullptr);
  ASSERT_TRUE(passing.ok());
  EXPECT_EQ(passing->chosen, 0u);
  EXPECT_TRUE(passing->failing().empty());
  ASSERT_TRUE(passing->oracles[0]);

  auto one = create_sample_oracles(m, "norm.onnx", {sample(m, 1)}, {}, fp16(), SampleUse::FirstFailing, nullptr);
  ASSERT_TRUE(one.ok());
  EXPECT_FALSE(one->verdicts[0]) << "the command checks a single sample itself";
  EXPECT_EQ(one->main().statistics().evaluations, 0u);
}

TEST(Samples, ABadSampleIsAnErrorNamingItAndACancelIsInterrupted) {
  const Model m = parse_model(testing::kSquareOverflow);
  InputSample wrong{"wrong.pb", {{"X", *Tensor::allocate(DType::Float, {3})}}};
  auto bad = create_sample_oracles(m, "norm.onnx", {sample(m, 0.1), std::move(wrong)}, {}, fp16(),
                                   SampleUse::FirstFailing, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().where, "wrong.pb") << bad.error().message();

  const std::atomic<bool> cancelled{true};
  auto stopped = create_sample_oracles(m, "norm.onnx", {sample(m, 0.1), sample(m, 1)}, {}, fp16(),
                                       SampleUse::FirstFailing, &cancelled);
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.error().message(), "interrupted");
}

TEST(Flatten, OnlyAFailingModelWithControlFlowIsFlattened) {
  const Model plain = parse_model(testing::kSquareOverflow);
  auto oracles = create_sample_oracles(plain, "norm.onnx", {sample(plain, 1)}, {}, fp16(), SampleUse::FirstFailing, nullptr);
  ASSERT_TRUE(oracles.ok());
  auto none = flatten_when_failing(oracles->main(), {}, {}, {});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);
  EXPECT_EQ(oracles->main().statistics().evaluations, 0u) << "no control flow: nothing runs";

  const Model branchy = parse_model(testing::kBranchOverflow);
  auto failing = create_sample_oracles(branchy, "cf.onnx", {sample(branchy, 1)}, {}, fp16(), SampleUse::FirstFailing, nullptr);
  ASSERT_TRUE(failing.ok());
  std::vector<std::string> lines;
  auto flat = flatten_when_failing(failing->main(), {}, [&](std::string line) { lines.push_back(std::move(line)); }, {});
  ASSERT_TRUE(flat.ok()) << flat.error().message();
  ASSERT_TRUE(*flat);
  EXPECT_EQ((*flat)->inlined.inlined, 1u);
  EXPECT_TRUE((*flat)->verdict.fails());
  EXPECT_FALSE(lines.empty());

  FlattenOptions keep_if;
  keep_if.inline_if = false;
  auto kept = flatten_when_failing(failing->main(), keep_if, {}, {});
  ASSERT_TRUE(kept.ok());
  EXPECT_FALSE(*kept) << "--no-inline-if: the If stays";

  OracleOptions fp32;
  fp32.engine = "opt";
  auto passing = create_sample_oracles(branchy, "cf.onnx", {sample(branchy, 1)}, {}, fp32, SampleUse::FirstFailing, nullptr);
  ASSERT_TRUE(passing.ok());
  auto unflattened = flatten_when_failing(passing->main(), {}, {}, {});
  ASSERT_TRUE(unflattened.ok());
  EXPECT_FALSE(*unflattened) << "a model that passes is not flattened";
  EXPECT_EQ(passing->main().statistics().evaluations, 1u);
}

// Loose to tight: at 0.01 the overflowing nodes; at 1e-4 FP16's rounding elsewhere counts too.
TEST(ToleranceSweep, GivesTheSetAtEachToleranceAndTheTightestFound) {
  Model m = parse_model(testing::kSquareOverflow);
  for (Node& n : m.graph.nodes) n.name = n.outputs.at(0);
  auto oracles = create_sample_oracles(m, "norm.onnx", {sample(m, 1)}, {}, fp16(), SampleUse::KeepAll, nullptr);
  ASSERT_TRUE(oracles.ok());
  PrecisionOptions options;
  std::vector<double> seen;
  auto sweep = sweep_tolerances(oracles->kept(), options, {1e9, 0.01, 1e-4}, {},
                                [&](const SweepRow& row) { seen.push_back(row.tolerance); });
  ASSERT_TRUE(sweep.ok()) << sweep.error().message();
  EXPECT_EQ(seen, (std::vector<double>{1e9, 0.01, 1e-4}));
  ASSERT_EQ(sweep->rows.size(), 3u);
  EXPECT_EQ(sweep->rows[0].outcome.kind, PrecisionOutcome::Kind::DoesNotFail);
  std::vector<std::string> loose;
  for (const auto& p : sweep->rows[1].outcome.pinned) loose.push_back(p.name);
  EXPECT_EQ(loose, (std::vector<std::string>{"square", "var", "ve", "std"}));
  EXPECT_GT(sweep->rows[2].outcome.pinned.size(), 4u);
  ASSERT_TRUE(sweep->tightest_found());
  EXPECT_EQ(sweep->tightest_found(), &sweep->rows[2].outcome);
  EXPECT_EQ(sweep->answer(), sweep->tightest_found());
  const std::string json = sweep_json(*sweep);
  EXPECT_NE(json.find("\"outcome\": \"does not fail\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"square\""), std::string::npos) << json;
}

}  // namespace
}  // namespace reduce
