// Inputs the fuzz harnesses (fuzz/, docs/fuzzing.md) found crashing the engines, as readable
// models: each test failed (a sanitizer report or a signal) before its fix.
#include <gtest/gtest.h>

#include <limits>

#include "core/validate.h"
#include "engine/engine.h"
#include "ops/op_test_support.h"

namespace reduce {
namespace {

using op_test::one_node;

struct NewerOpCase {
  const char* op;
  size_t inputs;
  DType dtype;
};

// Opset-18 ops that ONNX 1.12 has no schema for, so nothing knew which inputs they require:
// reference_engine_fuzzer ran BitwiseAnd(X0, "") into a null dereference (fuzz/regressions/
// reference_engine/opset18_bitwise_missing_input).
const NewerOpCase kNewerOps[] = {
    {"BitwiseAnd", 2, DType::Int32}, {"BitwiseOr", 2, DType::Int32}, {"BitwiseXor", 2, DType::Int32},
    {"BitwiseNot", 1, DType::Int32}, {"Mish", 1, DType::Float},      {"GroupNormalization", 3, DType::Float},
};

TEST(FuzzRegression, Opset18OpsWithoutASchemaRequireTheirInputs) {
  auto engine = make_reference_engine(1);
  for (const auto& c : kNewerOps) {
    ASSERT_TRUE(validate_model(one_node(c.op, 18, c.inputs, c.dtype)).ok()) << c.op;
    for (size_t k = 0; k < c.inputs; ++k) {
      Model m = one_node(c.op, 18, c.inputs, c.dtype);
      m.graph.nodes[0].inputs[k] = "";
      const std::string expected = "node 'n0' (" + std::string(c.op) + "): input " + std::to_string(k) + " is required";
      Status s = validate_model(m);
      ASSERT_FALSE(s.ok()) << c.op << " without input " << k;
      EXPECT_EQ(s.error().what, expected);
      // The executor checks too (models built in memory need not be validated).
      TensorMap feeds;
      for (size_t j = 0; j < c.inputs; ++j)
        if (j != k) feeds["X" + std::to_string(j)] = Tensor::allocate(c.dtype, {2, 3}).value();
      m.graph.inputs.erase(m.graph.inputs.begin() + static_cast<std::ptrdiff_t>(k));
      auto prepared = engine->prepare(m);
      ASSERT_TRUE(prepared.ok()) << prepared.error().what;
      auto out = (*prepared)->run(feeds);
      ASSERT_FALSE(out.ok()) << c.op;
      EXPECT_NE(out.error().what.find(expected), std::string::npos) << out.error().what;
    }
  }
}

// Split sizes that add up past INT64_MAX overflowed the sum compared with the dimension (UBSan:
// signed integer overflow; fuzz/regressions/reference_engine/split_sizes_overflow).
TEST(FuzzRegression, SplitSizesThatOverflowAreRefused) {
  Model m = one_node("Split", 13, 1);
  m.graph.nodes[0].inputs.push_back("sizes");
  m.graph.nodes[0].outputs = {"Z", "W"};
  m.graph.outputs.push_back({"W", {}, {}});
  const int64_t huge = std::numeric_limits<int64_t>::max();
  m.graph.initializers.push_back({"sizes", Tensor::from_vector(DType::Int64, {2}, std::vector<int64_t>{1, huge}).value(), {}});
  ASSERT_TRUE(validate_model(m).ok());
  auto prepared = make_reference_engine(1)->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().what;
  TensorMap feeds;
  feeds["X0"] = Tensor::allocate(DType::Float, {2, 3}).value();
  auto out = (*prepared)->run(feeds);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().what.find("does not cut a dimension of 2 into 2 outputs"), std::string::npos) << out.error().what;
}

// TopK with one output at opset 18 (newer than ONNX 1.12, so outputs were not checked against the
// schema) passed validation; the kernel's allocate_output(1) threw std::out_of_range, which nothing
// caught (fuzz/regressions/reference_engine/topk_one_output_opset18).
TEST(FuzzRegression, AnOpWithTooFewOutputsIsRefused) {
  Model m = one_node("TopK", 18, 2);
  m.graph.inputs[1].type = ValueType::tensor(DType::Int64, {1});
  Status s = validate_model(m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().what, "node 'n0' (TopK): output 1 is required");
  // Run without validation: the executor reports the missing output instead of throwing.
  auto prepared = make_reference_engine(1)->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().what;
  TensorMap feeds;
  feeds["X0"] = Tensor::allocate(DType::Float, {2, 3}).value();
  feeds["X1"] = Tensor::from_vector(DType::Int64, {1}, std::vector<int64_t>{2}).value();
  auto out = (*prepared)->run(feeds);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().what.find("node 'n0' (TopK): output 1 is required"), std::string::npos) << out.error().what;
}

// Expand to [0, INT64_MAX, INT64_MAX]: the output is empty (0 bytes), but its row-major strides
// overflowed (UBSan; fuzz/regressions/reference_engine/expand_empty_huge_dims).
TEST(FuzzRegression, ExpandToAnEmptyShapeWithHugeDims) {
  Model m = one_node("Expand", 13, 2);
  m.graph.inputs[0].type = ValueType::tensor(DType::Float, {1});
  m.graph.inputs[1].type = ValueType::tensor(DType::Int64, {3});
  ASSERT_TRUE(validate_model(m).ok());
  auto prepared = make_reference_engine(1)->prepare(m);
  ASSERT_TRUE(prepared.ok()) << prepared.error().what;
  const int64_t huge = std::numeric_limits<int64_t>::max();
  TensorMap feeds;
  feeds["X0"] = Tensor::allocate(DType::Float, {1}).value();
  feeds["X1"] = Tensor::from_vector(DType::Int64, {3}, std::vector<int64_t>{0, huge, huge}).value();
  auto out = (*prepared)->run(feeds);
  ASSERT_TRUE(out.ok()) << out.error().what;
  EXPECT_EQ(out->at("Z").shape(), (Shape{0, huge, huge}));
  EXPECT_EQ(out->at("Z").byte_size(), 0u);
}

}  // namespace
}  // namespace reduce
