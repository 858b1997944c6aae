// Helpers of the operator tests: run a text model on the reference engine, check values and errors.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/engine.h"
#include "test_support.h"

namespace reduce::op_test {

inline Tensor floats(Shape shape, std::vector<float> v) {
  return Tensor::from_vector(DType::Float, std::move(shape), v).value();
}
inline Tensor int64s(Shape shape, std::vector<int64_t> v) {
  return Tensor::from_vector(DType::Int64, std::move(shape), v).value();
}

inline std::vector<float> values(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

// Runs a model (preparing and running both may fail) and returns the requested outputs.
inline Expected<TensorMap> run(const std::string& text, const TensorMap& inputs,
                               std::vector<std::string> outputs = {"Y"}, int threads = 0) {
  Model m = testing::parse_model(text);
  REDUCE_ASSIGN(auto prepared, make_reference_engine(threads)->prepare(m));
  RunOptions options;
  options.outputs = std::move(outputs);
  return prepared->run(inputs, options);
}

// The run fails with a message naming `what` (the attribute or input at fault), not for another reason.
inline void expect_error(const Expected<TensorMap>& out, const std::string& what) {
  ASSERT_FALSE(out.ok()) << "expected an error about " << what;
  EXPECT_NE(out.error().message().find(what), std::string::npos) << out.error().message();
}

inline void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

// A one-node model of `op` at `opset` with inputs X0..X(n-1) (`dtype`[2, 3]) and output Z. Ops
// whose kernel cannot be made without an attribute get it, set to 1 (GroupNormalization's
// num_groups, LinearAttention's head counts).
inline Model one_node(const std::string& op, int64_t opset, size_t inputs, DType dtype = DType::Float) {
  Model m;
  m.opset_imports.push_back({"", opset});
  Node n;
  n.name = "n0";
  n.op_type = op;
  for (size_t k = 0; k < inputs; ++k) {
    n.inputs.push_back("X" + std::to_string(k));
    m.graph.inputs.push_back({n.inputs.back(), ValueType::tensor(dtype, {2, 3}), {}});
  }
  std::vector<const char*> ones;
  if (op == "GroupNormalization") ones = {"num_groups"};
  if (op == "LinearAttention") ones = {"q_num_heads", "kv_num_heads"};
  for (const char* name : ones) {
    Attribute a;
    a.name = name;
    a.kind = Attribute::Kind::Int;
    a.i = 1;
    n.attributes.push_back(a);
  }
  n.outputs = {"Z"};
  m.graph.outputs.push_back({"Z", {}, {}});
  m.graph.nodes.push_back(std::move(n));
  return m;
}

}  // namespace reduce::op_test
