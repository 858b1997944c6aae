// broadcast-batch1: a CBAM-like spatial gate, Mul([1,C,H,W], [1,1,H,W]) at batch 1, the model's only
// rank-4 broadcast with a dim1 == 1 operand. Minimal reproducer: the Mul alone (its cut inputs keep
// the trigger shapes).
#include <cmath>

#include "triggers.h"

namespace reduce::corpus {

void build_broadcast_batch1(GraphBuilder& b, size_t target, Random& rng) {
  auto image = b.input("image", {1, kCnnChannels, kCnnSide, kCnnSide});
  auto out = bury(b, image, target, 3, grow_cnn, rng, [](GraphBuilder& b, const Value& h, Random& rng) {
    b.begin_block();
    const int64_t c = h.shape[1];
    const Shape gate_shape{1, 1, h.shape[2], h.shape[3]};
    // Weights large enough that the gate spreads over (0, 1): reading it at the wrong place shows.
    const double a = 3.0 * std::sqrt(3.0 / static_cast<double>(c));
    auto w = b.uniform_weight("w", {1, c, 1, 1}, rng, -a, a);
    auto bias = b.uniform_weight("b", {1}, rng, -0.1, 0.1);
    auto logits = b.node("Conv", {h.name, w.name, bias.name}, gate_shape, {ints_attribute("kernel_shape", {1, 1})});
    auto gate = b.node("Sigmoid", {logits.name}, gate_shape);
    auto gated = b.node("Mul", {h.name, gate.name}, h.shape);
    b.mark_minimal();
    return gated;
  });
  b.output(out);
}

}  // namespace reduce::corpus
