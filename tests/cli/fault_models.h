// Small text models shared by the CLI tests: a chain with one broadcast-batch1 trigger, an FP16 overflow.
#pragma once

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

}  // namespace reduce::testing
