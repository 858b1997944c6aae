// The large-activation chain (see large_chain.h).
#include "large_chain.h"

#include <cmath>
#include <string>

#include "graph_builder.h"

namespace reduce::corpus {

namespace {

// The broadcast-batch1 trigger on h [1, C, H, W]: a 1x1 Conv gate to [1, 1, H, W], Sigmoid, and
// the Mul that broadcasts it over the channels (the minimal reproducer).
Value broadcast_gate(GraphBuilder& b, Random& rng, const Value& h, const Shape& shape) {
  const int64_t channels = shape[1], rows = shape[2], cols = shape[3];
  b.begin_block();
  auto w = b.uniform_weight("g", {1, channels, 1, 1}, rng, -1.0, 1.0);
  auto logits = b.node("Conv", {h.name, w.name}, {1, 1, rows, cols}, {ints_attribute("kernel_shape", {1, 1})});
  auto gate = b.node("Sigmoid", {logits.name}, {1, 1, rows, cols});
  Value out = b.node("Mul", {h.name, gate.name}, shape);
  b.mark_minimal();
  return out;
}

}  // namespace

Model large_activation_chain(size_t nodes, int64_t channels, int64_t side) {
  GraphBuilder b("large_chain");
  Random rng(1);
  const Shape shape{1, channels, side, side};
  Value h = b.input("x", shape);
  const char* ops[] = {"Add", "Mul", "Tanh", "Relu"};
  const size_t chain = nodes < 4 ? 1 : nodes - 3, trigger_at = chain / 2;
  for (size_t i = 0; i < chain; ++i) {
    if (i == trigger_at) h = broadcast_gate(b, rng, h, shape);
    b.begin_block();
    const std::string op = ops[i % 4];
    if (op == "Add") h = b.node(op, {h.name, b.scalar("a", 0.01f).name}, shape);
    else if (op == "Mul") h = b.node(op, {h.name, b.scalar("m", 0.99f).name}, shape);
    else h = b.node(op, {h.name}, shape);
  }
  b.output(h);
  return b.finish("elementwise chain with a broadcast-batch1 gate (issue 20)");
}

Model large_weights_chain(size_t weights, int64_t side) {
  GraphBuilder b("large_weights");
  Random rng(2);
  const int64_t channels = 4, rows = 16;
  const Shape shape{1, channels, rows, side};
  Value h = b.input("x", shape);
  const double scale = 1.0 / std::sqrt(static_cast<double>(side));
  for (size_t i = 0; i < weights; ++i) {
    if (i == weights / 2) h = broadcast_gate(b, rng, h, shape);
    b.begin_block();
    auto w = b.uniform_weight("w", {side, side}, rng, -scale, scale);
    h = b.node("MatMul", {h.name, w.name}, shape);
    h = b.node("Tanh", {h.name}, shape);
  }
  b.output(h);
  return b.finish("MatMul chain with large weights and a broadcast-batch1 gate (issue 20)");
}

}  // namespace reduce::corpus
