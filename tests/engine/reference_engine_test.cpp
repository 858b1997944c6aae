// Reference engine: running graphs, requested intermediate values, input validation, errors.
#include <gtest/gtest.h>

#include "core/half.h"
#include "engine/engine.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;

const char* kChain = R"(
<ir_version: 8, opset_import: ["" : 15]>
chain (float[2, 3] X, float[3] B) => (float[2, 3] Y)
{
  a = Add(X, B)
  b = Relu(a)
  Y = Mul(b, a)
}
)";

Tensor floats(Shape shape, std::vector<float> v) { return Tensor::from_vector(DType::Float, std::move(shape), v).value(); }

std::vector<float> values(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

TEST(ReferenceEngine, RunsAGraphWithBroadcasting) {
  Model m = parse_model(kChain);
  auto prepared = make_reference_engine()->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  TensorMap in{{"X", floats({2, 3}, {1, -2, 3, -4, 5, -6})}, {"B", floats({3}, {1, 1, 1})}};
  auto out = (*prepared)->run(in);
  ASSERT_TRUE(out.ok()) << out.error().message();
  // a = X + 1 = {2,-1,4,-3,6,-5}; Y = relu(a) * a
  EXPECT_EQ(values(out->at("Y")), (std::vector<float>{4, 0, 16, 0, 36, 0}));
}

TEST(ReferenceEngine, AnyValueCanBeRequestedWithoutChangingTheModel) {
  Model m = parse_model(kChain);
  auto prepared = make_reference_engine()->prepare(m);
  ASSERT_TRUE(prepared.ok());
  TensorMap in{{"X", floats({2, 3}, {1, -2, 3, -4, 5, -6})}, {"B", floats({3}, {1, 1, 1})}};
  RunOptions opts;
  opts.outputs = {"a", "Y"};
  auto out = (*prepared)->run(in, opts);
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("a")), (std::vector<float>{2, -1, 4, -3, 6, -5}));
  EXPECT_EQ(out->size(), 2u);
}

TEST(ReferenceEngine, InputProblemsAreClearErrors) {
  Model m = parse_model(kChain);
  auto prepared = make_reference_engine()->prepare(m);
  ASSERT_TRUE(prepared.ok());
  auto missing = (*prepared)->run({{"X", floats({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().what.find("missing input 'B'"), std::string::npos) << missing.error().what;
  auto shape = (*prepared)->run({{"X", floats({3, 2}, {1, 2, 3, 4, 5, 6})}, {"B", floats({3}, {1, 1, 1})}});
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.error().what.find("input 'X' must have shape float[2,3]"), std::string::npos) << shape.error().what;
  auto dtype = (*prepared)->run({{"X", Tensor::allocate(DType::Int32, {2, 3}).value()}, {"B", floats({3}, {1, 1, 1})}});
  ASSERT_FALSE(dtype.ok());
  auto extra = (*prepared)->run({{"X", floats({2, 3}, {1, 2, 3, 4, 5, 6})}, {"B", floats({3}, {1, 1, 1})},
                                 {"Q", floats({1}, {0})}});
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.error().what.find("no input named 'Q'"), std::string::npos);
}

TEST(ReferenceEngine, UnsupportedOperatorIsAnErrorNamingTheNode) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15, "com.example" : 1]>
g (float[2] X) => (float[2] Y)
{
  Y = com.example.Frobnicate (X)
}
)");
  m.graph.nodes[0].name = "fr1";
  auto prepared = make_reference_engine()->prepare(m);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.error().what, "node 'fr1' (Frobnicate): unsupported operator com.example.Frobnicate (opset 1)");
}

TEST(ReferenceEngine, Float16IsComputedInFloatAndRoundedOnce) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float16[1] X, float16[1] Y) => (float16[1] Z)
{
  Z = Add(X, Y)
}
)");
  auto prepared = make_reference_engine()->prepare(m);
  ASSERT_TRUE(prepared.ok());
  auto half = [](float v) {
    return Tensor::from_vector(DType::Float16, {1}, std::vector<uint16_t>{float_to_half(v)}).value();
  };
  auto out = (*prepared)->run({{"X", half(60000.0f)}, {"Y", half(10000.0f)}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->at("Z").data<uint16_t>()[0], 0x7c00);  // 70000 overflows half: +Inf, as IEEE says
}

TEST(ReferenceEngine, IntegerDivisionByZeroIsAnErrorNotACrash) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (int32[2] X, int32[2] Y) => (int32[2] Z)
{
  Z = Div(X, Y)
}
)");
  auto prepared = make_reference_engine()->prepare(m);
  ASSERT_TRUE(prepared.ok());
  auto ints = [](std::vector<int32_t> v) { return Tensor::from_vector(DType::Int32, {2}, v).value(); };
  auto out = (*prepared)->run({{"X", ints({4, 5})}, {"Y", ints({2, 0})}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().what.find("division by zero"), std::string::npos);
}

}  // namespace
}  // namespace reduce

namespace reduce {
namespace {

TEST(ReferenceEngine, IfRunsTheChosenBranchWhichReadsOuterValues) {
  Model m = testing::parse_model(R"(
<ir_version: 8, opset_import: ["" : 16]>
g (bool c, float[2] X) => (float[2] Y)
{
  z = Relu(X)
  Y = If (c) <
    then_branch = t () => (float[2] a) { a = Add(X, z) },
    else_branch = e () => (float[2] b) { b = Neg(z) }
  >
}
)");
  auto prepared = make_reference_engine()->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  auto x = Tensor::from_vector(DType::Float, {2}, std::vector<float>{-1, 2}).value();
  auto flag = [](bool v) { return Tensor::from_vector(DType::Bool, {}, std::vector<uint8_t>{v}).value(); };
  auto yes = (*prepared)->run({{"c", flag(true)}, {"X", x}});
  ASSERT_TRUE(yes.ok()) << yes.error().message();
  EXPECT_EQ(yes->at("Y").data<float>()[0], -1.0f);
  EXPECT_EQ(yes->at("Y").data<float>()[1], 4.0f);
  auto no = (*prepared)->run({{"c", flag(false)}, {"X", x}});
  ASSERT_TRUE(no.ok()) << no.error().message();
  EXPECT_EQ(no->at("Y").data<float>()[1], -2.0f);
}

TEST(ReferenceEngine, TfIdfVectorizerCountsPoolNgramsWithSkips) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (int64[6] x) => (float[3] y)
{
  y = TfIdfVectorizer<mode = "TF", min_gram_length = 1, max_gram_length = 2, max_skip_count = 1,
                      ngram_counts = [0, 2], ngram_indexes = [0, 1, 2], pool_int64s = [7, 8, 7, 9]>(x)
}
)");
  auto prepared = make_reference_engine()->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message();
  // Unigrams 7 and 8; the bigram (7, 9) appears once adjacent and once with one skip.
  auto x = Tensor::from_vector(DType::Int64, {6}, std::vector<int64_t>{7, 9, 7, 1, 9, 8}).value();
  auto out = (*prepared)->run({{"x", x}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values(out->at("y")), (std::vector<float>{2, 1, 2}));
}

TEST(ReferenceEngine, TfIdfVectorizerRefusesAPoolThatIsNotWholeNgrams) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (int64[6] x) => (float[3] y)
{
  y = TfIdfVectorizer<mode = "TF", min_gram_length = 2, max_gram_length = 2, max_skip_count = 0,
                      ngram_counts = [0, 0], ngram_indexes = [0], pool_int64s = [7, 8, 9]>(x)
}
)");
  auto prepared = make_reference_engine()->prepare(m);
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.error().what.find("whole n-grams"), std::string::npos) << prepared.error().what;
}

}  // namespace
}  // namespace reduce
