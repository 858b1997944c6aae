// Optimized engine specs (`opt:OPTIONS`) and precision modes: parsing, errors, and real fp16/bf16 numerics.
#include <cmath>

#include "core/half.h"
#include "optimized_support.h"

namespace reduce {
namespace {

using testing::floats;
using testing::parse_model;
using testing::run_spec;
using testing::values;

TEST(OptimizedOptions, ParsesPrecisionFaultsAndDisabledPasses) {
  auto o = parse_optimized_options("bf16,fault=broadcast-batch1+layernorm-drop-eps,no-constant-folding");
  ASSERT_TRUE(o.ok()) << o.error().message();
  EXPECT_EQ(o->precision, Precision::BF16);
  EXPECT_EQ(o->faults, (std::vector<Fault>{Fault::BroadcastBatch1, Fault::LayerNormDropEps}));
  EXPECT_EQ(o->disabled_passes, (std::vector<std::string>{"constant-folding"}));
  EXPECT_EQ(parse_optimized_options("fp16")->precision, Precision::FP16);
  EXPECT_EQ(parse_optimized_options("")->precision, Precision::FP32);
}

TEST(OptimizedOptions, UnknownWordsAreOneLineErrorsListingTheKnownOnes) {
  auto option = parse_optimized_options("fp8");
  ASSERT_FALSE(option.ok());
  EXPECT_NE(option.error().what.find("unknown option 'fp8'"), std::string::npos);
  EXPECT_NE(option.error().what.find("fp16"), std::string::npos);
  auto fault = parse_optimized_options("fault=broadcast-batch1+nope");
  ASSERT_FALSE(fault.ok());
  EXPECT_NE(fault.error().what.find("unknown fault 'nope'"), std::string::npos);
  EXPECT_NE(fault.error().what.find("input-binding-order"), std::string::npos);
  auto pass = parse_optimized_options("no-magic");
  ASSERT_FALSE(pass.ok());
  EXPECT_NE(pass.error().what.find("unknown pass 'magic'"), std::string::npos);
  EXPECT_NE(pass.error().what.find("attention-fusion"), std::string::npos);
  EXPECT_FALSE(parse_optimized_options("fp16,").ok());
  for (const auto& e : {option.error().what, fault.error().what, pass.error().what})
    EXPECT_EQ(e.find('\n'), std::string::npos);
}

TEST(OptimizedOptions, EngineSpecsBuildTheOptimizedEngine) {
  auto plain = make_engine("opt");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)->name(), "opt");
  EXPECT_TRUE(make_engine("opt:fp16,fault=attention-unstable-softmax").ok());
  auto bad = make_engine("opt:fp9");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().where, "opt:fp9");
  EXPECT_FALSE(make_engine("optimized").ok());
}

const char* kSquareMean = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 4] X) => (float[1, 1] Y)
<float Two = {2.0}>
{
  sq = Pow(X, Two)
  Y = ReduceMean <axes = [-1]> (sq)
}
)";

TEST(OptimizedPrecision, Fp16OverflowsToInfinityBeyond65504) {
  Model m = parse_model(kSquareMean);
  const TensorMap in = {{"X", floats({1, 4}, {300, 1, 2, 3})}};  // 300^2 = 90000 > 65504
  EXPECT_TRUE(std::isfinite(values(run_spec("opt", m, in).at("Y"))[0]));
  EXPECT_TRUE(std::isinf(values(run_spec("opt:fp16", m, in).at("Y"))[0]));
  // bfloat16 has float's range: finite, but rounded to 8 significant bits.
  const float bf = values(run_spec("opt:bf16", m, in).at("Y"))[0];
  EXPECT_TRUE(std::isfinite(bf));
  EXPECT_EQ(bf, bfloat16_to_float(float_to_bfloat16(bf)));
}

TEST(OptimizedPrecision, ActivationsAndWeightsAreStoredInHalf) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[3] X) => (float[3] Y)
<float[3] W = {0.1, 0.2, 0.3}>
{
  Y = Add(X, W)
}
)");
  const TensorMap in = {{"X", floats({3}, {1.0001f, 2, 3})}};
  const auto out = run_spec("opt:fp16", m, in).at("Y");
  EXPECT_EQ(out.dtype(), DType::Float);  // returned in the declared type
  const auto h = [](float x) { return half_to_float(float_to_half(x)); };
  EXPECT_EQ(values(out), (std::vector<float>{h(h(1.0001f) + h(0.1f)), h(2 + h(0.2f)), h(3 + h(0.3f))}));
  EXPECT_EQ(values(in.at("X"))[0], 1.0001f);  // the caller's input is not rounded in place
}

TEST(OptimizedPrecision, LargeWeightsAreRoundedAtUseNotStoredPerPreparedModel) {
  // 4 MiB of float weights under bf16. A prepared model once held its own rounded copy of every
  // weight: a second GiB per candidate for 1 GiB of weights. Now the node reading a large weight
  // rounds it while it runs, with the same values as a weight stored rounded.
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 256] X, float[256, 4096] W) => (float[1, 4096] Y)
{
  Y = MatMul(X, W)
}
)");
  m.graph.inputs.resize(1);
  m.graph.initializers.push_back({"W", testing::ramp({256, 4096}, -1, 1, 7), {}});
  const TensorMap in = {{"X", testing::ramp({1, 256}, -1, 1, 8)}};
  auto engine = make_engine("opt:bf16");
  ASSERT_TRUE(engine.ok());
  const size_t before = testing::heap_bytes_in_use();
  auto prepared = (*engine)->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  for (int run = 0; run < 2; ++run) ASSERT_TRUE((*prepared)->run(in).ok());
  const size_t after = testing::heap_bytes_in_use();
  EXPECT_LT(after, before + (size_t{2} << 20)) << "the prepared model holds " << (after - before) << " bytes";

  // The same product over the weights and input rounded by hand, on the reference.
  const auto bf = [](float x) { return bfloat16_to_float(float_to_bfloat16(x)); };
  Model rounded = m;
  Tensor& w = rounded.graph.initializers[0].tensor;
  w = Tensor::copy_of(w.dtype(), w.shape(), w.bytes()).value();
  for (float& x : w.mutable_data<float>()) x = bf(x);
  std::vector<float> x = values(in.at("X"));
  for (float& v : x) v = bf(v);
  std::vector<float> expected = values(run_spec("ref", rounded, {{"X", floats({1, 256}, x)}}).at("Y"));
  for (float& v : expected) v = bf(v);
  EXPECT_EQ(values((*prepared)->run(in)->at("Y")), expected);
}

TEST(OptimizedPrecision, AMatMulRoundsItsLargeWeightAsItReadsItWithoutAWholeRoundedCopy) {
  // A MatMul alone, and one fused with its activation, each over 4 MiB of float weights: the
  // values a bf16 run holds (the ledger counts them) stay far below one weight, with the values of
  // weights stored rounded.
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 256] X, float[256, 4096] W, float[256, 4096] V) => (float[1, 4096] Y, float[1, 4096] Z)
{
  h = MatMul(X, W)
  Y = Tanh(h)
  Z = MatMul(X, V)
}
)");
  m.graph.inputs.resize(1);
  m.graph.initializers.push_back({"W", testing::ramp({256, 4096}, -1, 1, 3), {}});
  m.graph.initializers.push_back({"V", testing::ramp({256, 4096}, -1, 1, 4), {}});
  const TensorMap in = {{"X", testing::ramp({1, 256}, -1, 1, 5)}};
  auto options = parse_optimized_options("bf16");
  ASSERT_TRUE(options.ok());
  options->limits.ledger = std::make_shared<MemoryLedger>();
  auto prepared = make_optimized_engine(*options)->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  auto out = (*prepared)->run(in);
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_LT(options->limits.ledger->peak(), uint64_t{1} << 20);

  const auto bf = [](float x) { return bfloat16_to_float(float_to_bfloat16(x)); };
  Model rounded = m;
  for (auto& init : rounded.graph.initializers) {
    init.tensor = Tensor::copy_of(init.tensor.dtype(), init.tensor.shape(), init.tensor.bytes()).value();
    for (float& x : init.tensor.mutable_data<float>()) x = bf(x);
  }
  std::vector<float> x = values(in.at("X"));
  for (float& v : x) v = bf(v);
  const TensorMap reference = run_spec("ref", rounded, {{"X", floats({1, 256}, x)}}, {.outputs = {"h", "Z"}, .on_output = {}});
  std::vector<float> y = values(reference.at("h")), z = values(reference.at("Z"));
  for (float& v : y) v = bf(std::tanh(v));  // fused: the activation reads the unrounded product
  for (float& v : z) v = bf(v);
  EXPECT_EQ(values(out->at("Y")), y);
  EXPECT_EQ(values(out->at("Z")), z);
}

TEST(OptimizedPrecision, IntegerTensorsAreUntouched) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64[2] X) => (int64[2] Y)
{
  Y = Add(X, X)
}
)");
  const TensorMap in = {{"X", Tensor::from_vector(DType::Int64, {2}, std::vector<int64_t>{100001, 3}).value()}};
  const auto y = run_spec("opt:fp16", m, in).at("Y");
  EXPECT_EQ(y.data<int64_t>()[0], 200002);
}

TEST(OptimizedEngine, AModelCannotCallTheFusedKernelsItself) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17, "reduce.optimized" : 1]>
g (float[2, 4] X) => (float[2, 4] Y)
{
  Y = reduce.optimized.LayerNorm <epsilon = 0.0, axes = 1> (X, , )
}
)");
  auto prepared = make_engine("opt").value()->prepare(m);
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.error().what.find("unsupported operator reduce.optimized.LayerNorm"), std::string::npos)
      << prepared.error().what;
}

}  // namespace
}  // namespace reduce
