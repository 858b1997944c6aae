// ONNX-level mixed precision (core/precision_conversion.h): which nodes convert, where Casts go (once per
// value and type, never in pairs), what keeps its type, and that the result runs on the reference.
#include <gtest/gtest.h>

#include "core/precision_conversion.h"
#include "core/model_io.h"
#include "core/validate.h"
#include "engine/engine.h"
#include "oracle/inputs.h"
#include "oracle/comparison.h"
#include "cli/fault_models.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;

// kSquareOverflow (fault_models.h): a LayerNorm whose square overflows FP16 when |X| is large;
// the inputs here stay small (|X| < 0.01), so the FP16 model agrees with the FP32 one.
const char* const kNorm = testing::kSquareOverflow;

void name_nodes(Model& m) {
  for (Node& n : m.graph.nodes) n.name = n.outputs.at(0);
}

const Node* producer(const Model& m, const std::string& value) {
  for (const Node& n : m.graph.nodes)
    if (std::find(n.outputs.begin(), n.outputs.end(), value) != n.outputs.end()) return &n;
  return nullptr;
}

// No Cast reads the output of a Cast: a value changes type at most once on its way.
void expect_no_cast_pairs(const Model& m) {
  for (const Node& n : m.graph.nodes)
    if (n.op_type == "Cast") {
      const Node* from = producer(m, n.inputs.at(0));
      EXPECT_FALSE(from && from->op_type == "Cast") << n.name << " casts the cast " << from->name;
    }
}

// Runs both models on the reference with the same small inputs; the outputs agree within `tolerance`.
void expect_same_outputs(const Model& fp32, const Model& low, double tolerance) {
  RandomInputOptions o;
  for (const auto& vi : fp32.graph.inputs) o.ranges[vi.name] = {-0.01, 0.01};
  auto inputs = make_random_inputs(fp32.graph, o);
  ASSERT_TRUE(inputs.ok());
  TensorMap feed;
  for (const auto& in : *inputs) feed[in.name] = in.tensor;
  auto engine = make_reference_engine(1);
  auto a = engine->prepare(fp32);
  auto b = engine->prepare(low);
  ASSERT_TRUE(a.ok() && b.ok()) << (b.ok() ? "" : b.error().message());
  auto want = (*a)->run(feed);
  auto got = (*b)->run(feed);
  ASSERT_TRUE(want.ok() && got.ok()) << (got.ok() ? "" : got.error().message());
  Tolerance t;
  t.atol = t.rtol = tolerance;
  for (const auto& vi : fp32.graph.outputs) {
    EXPECT_EQ(got->at(vi.name).dtype(), want->at(vi.name).dtype()) << vi.name << ": the outputs keep their type";
    EXPECT_TRUE(compare_tensors(vi.name, got->at(vi.name), want->at(vi.name), t).passed) << vi.name;
  }
}

TEST(MixedPrecision, EveryNodeConvertsAndTheBoundariesAreCastOnce) {
  Model m = parse_model(kNorm);
  name_nodes(m);
  auto fp16 = convert_to_mixed_precision(m, {});
  ASSERT_TRUE(fp16.ok()) << fp16.error().message();
  EXPECT_EQ(fp16->converted_nodes, 9u);
  EXPECT_EQ(fp16->casts, 2u) << "X in, Y out";
  EXPECT_EQ(fp16->converted_initializers, 2u);
  EXPECT_TRUE(fp16->kept_by_rule.empty());
  const Graph& g = fp16->model.graph;
  EXPECT_EQ(g.inputs[0].type.elem_type, static_cast<int32_t>(DType::Float)) << "inputs keep FP32";
  EXPECT_EQ(g.outputs[0].name, "Y");
  EXPECT_EQ(g.outputs[0].type.elem_type, static_cast<int32_t>(DType::Float));
  EXPECT_EQ(producer(fp16->model, "Y")->op_type, "Cast") << "the output keeps its name, cast back";
  EXPECT_EQ(g.find_initializer("Scale")->tensor.dtype(), DType::Float16);
  EXPECT_EQ(fp16->model.ir_version, m.ir_version);
  EXPECT_EQ(fp16->model.opset_imports, m.opset_imports);
  EXPECT_TRUE(validate_model(fp16->model).ok());
  expect_no_cast_pairs(fp16->model);
  expect_same_outputs(m, fp16->model, 0.01);

  MixedPrecisionOptions bf16;
  bf16.to = DType::BFloat16;
  auto b = convert_to_mixed_precision(m, bf16);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->model.graph.find_initializer("Scale")->tensor.dtype(), DType::BFloat16);
  expect_same_outputs(m, b->model, 0.05);
}

TEST(MixedPrecision, KeptNodesStayInFp32WithOneCastPerValueAndType) {
  Model m = parse_model(kNorm);
  name_nodes(m);
  MixedPrecisionOptions o;
  o.keep_nodes = {"square", "var"};
  auto out = convert_to_mixed_precision(m, o);
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->converted_nodes, 7u);
  // d (fp16) -> fp32 once for both inputs of square; var (fp32) -> fp16 for ve; X in, Y out.
  EXPECT_EQ(out->casts, 4u);
  const Node* square = producer(out->model, "square");
  ASSERT_TRUE(square);
  EXPECT_EQ(square->inputs[0], square->inputs[1]) << "one cast of d serves both inputs";
  EXPECT_EQ(producer(out->model, square->inputs[0])->op_type, "Cast");
  expect_no_cast_pairs(out->model);
  expect_same_outputs(m, out->model, 0.01);

  MixedPrecisionOptions by_type;
  by_type.keep_op_types = {"ReduceMean"};
  auto typed = convert_to_mixed_precision(m, by_type);
  ASSERT_TRUE(typed.ok());
  EXPECT_EQ(typed->converted_nodes, 7u);
  expect_same_outputs(m, typed->model, 0.01);
}

TEST(MixedPrecision, APositionTheSchemaFixesToFloatKeepsItsType) {
  // Resize's scales are tensor(float) whatever T is: the weight stays float, no Cast for it.
  const Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,2,2] X) => (float[1,1,4,4] Y)
<float[4] scales = {1.0, 1.0, 2.0, 2.0}>
{
  a = Relu(X)
  Y = Resize <mode = "nearest"> (a, , scales)
}
)");
  auto out = convert_to_mixed_precision(m, {});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->converted_nodes, 2u);
  EXPECT_EQ(out->model.graph.find_initializer("scales")->tensor.dtype(), DType::Float);
  EXPECT_EQ(out->casts, 2u) << "X in, Y out: the scales are read as they are";
  EXPECT_TRUE(validate_model(out->model).ok());
  expect_same_outputs(m, out->model, 0.01);
}

TEST(MixedPrecision, AnOutputReadInsideTheGraphKeepsItsNameAndType) {
  const Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] X) => (float[2,3] A, float[2,3] B)
{
  A = Exp(X)
  B = Neg(A)
}
)");
  auto out = convert_to_mixed_precision(m, {});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(producer(out->model, "A")->op_type, "Cast");
  EXPECT_EQ(producer(out->model, "B")->op_type, "Cast");
  // Neg reads Exp's low output (renamed), not A cast back and forth.
  const Node* neg = nullptr;
  for (const Node& n : out->model.graph.nodes)
    if (n.op_type == "Neg") neg = &n;
  ASSERT_TRUE(neg);
  EXPECT_EQ(producer(out->model, neg->inputs[0])->op_type, "Exp");
  EXPECT_EQ(out->casts, 3u) << "X in, A and B out";
  expect_no_cast_pairs(out->model);
  expect_same_outputs(m, out->model, 0.01);

  MixedPrecisionOptions io;
  io.keep_io_types = false;
  auto low_io = convert_to_mixed_precision(m, io);
  ASSERT_TRUE(low_io.ok());
  EXPECT_EQ(low_io->casts, 0u) << "inputs and outputs take the low type";
  EXPECT_EQ(low_io->model.graph.inputs[0].type.elem_type, static_cast<int32_t>(DType::Float16));
  EXPECT_EQ(low_io->model.graph.outputs[1].type.elem_type, static_cast<int32_t>(DType::Float16));
}

TEST(MixedPrecision, BadOptionsAreErrors) {
  const Model m = parse_model(kNorm);
  MixedPrecisionOptions int8;
  int8.to = DType::Int8;
  auto bad = convert_to_mixed_precision(m, int8);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("float16 or bfloat16"), std::string::npos);
  MixedPrecisionOptions missing;
  missing.keep_nodes = {"nope"};
  auto none = convert_to_mixed_precision(m, missing);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message(), "no node named 'nope' to keep in FP32");
}

}  // namespace
}  // namespace reduce
