// Small text models shared by the CLI tests: a chain with one broadcast-batch1 trigger.
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

}  // namespace reduce::testing
