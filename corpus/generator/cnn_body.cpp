// The CNN-like body: residual conv blocks on a [1, C, H, W] stream.
#include <cmath>

#include "bodies.h"

namespace reduce::corpus {

double residual_scale(size_t blocks) { return 0.5 / std::sqrt(static_cast<double>(blocks < 1 ? 1 : blocks)); }

namespace {

constexpr size_t kBlockNodes = 4;

// Conv3x3 -> Tanh|Sigmoid -> Conv1x1 (scaled by `eps`) -> Add to the stream.
void conv_block(GraphBuilder& b, Value& h, Random& rng, double eps) {
  b.begin_block();
  const int64_t c = h.shape[1];
  const double a3 = std::sqrt(3.0 / static_cast<double>(9 * c));
  auto w3 = b.uniform_weight("w", {c, c, 3, 3}, rng, -a3, a3);
  auto b3 = b.uniform_weight("b", {c}, rng, -0.1, 0.1);
  auto c1 = b.node("Conv", {h.name, w3.name, b3.name}, h.shape,
                   {ints_attribute("kernel_shape", {3, 3}), ints_attribute("pads", {1, 1, 1, 1})});
  auto act = b.node(rng.below(3) == 0 ? "Sigmoid" : "Tanh", {c1.name}, h.shape);
  const double a1 = eps * std::sqrt(3.0 / static_cast<double>(c));
  auto w1 = b.uniform_weight("w", {c, c, 1, 1}, rng, -a1, a1);
  auto b1 = b.uniform_weight("b", {c}, rng, -0.1 * eps, 0.1 * eps);
  auto c2 = b.node("Conv", {act.name, w1.name, b1.name}, h.shape, {ints_attribute("kernel_shape", {1, 1})});
  h = b.node("Add", {h.name, c2.name}, h.shape);
}

}  // namespace

void channel_scale(GraphBuilder& b, Value& h, Random& rng) {
  b.begin_block();
  auto s = b.uniform_weight("scale", {h.shape[1], 1, 1}, rng, 0.95, 1.05);
  h = b.node("Mul", {h.name, s.name}, h.shape);
}

void grow_cnn(GraphBuilder& b, Value& stream, size_t nodes, Random& rng) {
  const size_t blocks = nodes / kBlockNodes;
  const double eps = residual_scale(blocks);
  for (size_t i = 0; i < blocks; ++i) conv_block(b, stream, rng, eps);
  for (size_t i = blocks * kBlockNodes; i < nodes; ++i) channel_scale(b, stream, rng);
}

}  // namespace reduce::corpus
