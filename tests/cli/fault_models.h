// Small text models shared by the tests: a chain with one broadcast-batch1 trigger, FP16 overflows
// whose error is born in one node.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "test_support.h"

namespace reduce::testing {

// broadcast-batch1 buried in a chain: the Mul of [1,4,3,3] by [1,1,3,3].
inline const char* kBroadcastChain = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,4,3,3] X, float[1,1,3,3] M) => (float[1,4,3,3] Y)
{
  a = Relu(X)
  b = Sigmoid(M)
  c = Mul(a, b)
  d = Tanh(c)
  e = Abs(d)
  Y = Neg(e)
}
)";

// d = 600 X; LayerNorm-like y = d / sqrt(mean(d*d)): the squares overflow FP16 (600^2 > 65504), so
// the mean and its sqrt are inf and y is 0, a finite but wrong output (nodes unnamed: name them).
inline const char* kSquareNorm = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 8] X) => (float[1, 8] Y)
<float Scale = {600.0}>
{
  d = Mul (X, Scale)
  sq = Mul (d, d)
  var = ReduceMean <axes = [-1]> (sq)
  std = Sqrt (var)
  Y = Div (d, std)
}
)";

// A LayerNorm written with d*d on activations scaled by 600 (inputs in [-1, 1]): under fp16 the
// square (about 1e5) overflows 65504, the nodes after it inherit the Inf, and the Div by sqrt(inf)
// makes the output finite but wrong (a mismatch).
inline const char* kSquareOverflow = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4,16] X) => (float[4,16] Y)
<float Scale = {600.0}, float Eps = {0.00001}>
{
  scaled = Mul(X, Scale)
  mu = ReduceMean <axes = [1]> (scaled)
  d = Sub(scaled, mu)
  square = Mul(d, d)
  var = ReduceMean <axes = [1]> (square)
  ve = Add(var, Eps)
  std = Sqrt(ve)
  normed = Div(d, std)
  Y = Tanh(normed)
}
)";

// The whole network sits in the then-branch (taken: the sum of |x| is positive); its Exp of 20x
// overflows FP16.
inline const char* kBranchOverflow = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] y)
<float zero = {0.0}, float big = {20.0}>
{
  ax = Abs(x)
  s = ReduceSum <keepdims = 0> (ax)
  c = Greater(s, zero)
  y = If (c) <
    then_branch = t () => (float[2, 4] a) { u = Mul(x, big)  e = Exp(u)  a = Add(e, x) },
    else_branch = f () => (float[2, 4] b) { b = Neg(x) }
  >
}
)";

// `text` saved as dir/file (.onnx) with every node named after its first output (the text format
// names none; FP32 sets name nodes). Returns the path.
inline std::string save_named_model(const TempDir& dir, const char* text, const std::string& file) {
  auto m = parse_model_text(text);
  EXPECT_TRUE(m.ok());
  for (Node& n : m->graph.nodes) n.name = n.outputs.at(0);
  const auto path = dir / file;
  EXPECT_TRUE(save_model(*m, path).ok());
  return path.string();
}

}  // namespace reduce::testing
