// fp8-e4m3-saturation (quantized family): a projection that reads the stream scaled by 1000 (values
// of a few hundred to a few thousand), its input quantized to FP8 E4M3 with scale 1: E4M3's largest
// value is 448, so QuantizeLinear saturates and the projection sees a clipped input. Its output is
// scaled back by 1/1000 onto the stream. That MatMul is the one node to leave in float.
#include "triggers.h"

#include <cmath>

namespace reduce::corpus {

void build_fp8_saturation(GraphBuilder& b, size_t target, Random& rng) {
  b.set_opset(19);  // QuantizeLinear/DequantizeLinear with float8 types
  auto tokens = b.input("tokens", {1, kTokens, kWidth});
  auto out = bury(b, tokens, target, 5, grow_transformer, rng, [](GraphBuilder& b, const Value& h, Random& rng) {
    b.begin_block();
    auto big = b.scalar("scale_up", 1000.0f);
    auto scaled = b.node("Mul", {h.name, big.name}, h.shape);
    auto projected = biased_projection(b, scaled, rng, 0, 0);
    b.mark_fp32();
    auto small = b.scalar("scale_down", 0.0005f);
    auto contribution = b.node("Mul", {projected.name, small.name}, h.shape);
    return b.node("Add", {h.name, contribution.name}, h.shape);
  });
  b.output(out);
}

}  // namespace reduce::corpus
