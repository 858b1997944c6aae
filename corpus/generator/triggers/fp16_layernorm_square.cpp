// fp16-layernorm-square (precision family): one LayerNorm written as exporters sometimes write it,
// with Mul(d, d) instead of Pow (so nothing fuses it), on the stream scaled by 1000. The deviations
// (up to a few thousand) fit in FP16; their squares (about 1e5 to 1e7) and the row's variance do
// not: the square gives +inf, the variance, +eps and Sqrt +inf, and d / inf = 0, so the row comes
// out 0 where the reference normalizes it: finite and wrong. Kept in FP32, the square, the mean,
// the Add and the Sqrt hold those values, and each is needed: a node left in FP16 that reads one
// of them sees it rounded to +inf (the engine converts at the boundary). The Div reads values FP16
// holds (d, and a standard deviation of about 1000), so it is not needed.
#include "triggers.h"

namespace reduce::corpus {

void build_fp16_layernorm_square(GraphBuilder& b, size_t target, Random& rng) {
  auto tokens = b.input("tokens", {1, kTokens, kWidth});
  auto out = bury(b, tokens, target, 12, grow_transformer, rng, [](GraphBuilder& b, const Value& h, Random& rng) {
    b.begin_block();
    const int64_t d = h.shape[2];
    Shape stat = h.shape;
    stat.back() = 1;
    auto big = b.scalar("scale", 1000.0f);
    auto scaled = b.node("Mul", {h.name, big.name}, h.shape);
    auto mean = b.node("ReduceMean", {scaled.name}, stat, {ints_attribute("axes", {-1})});
    auto centered = b.node("Sub", {scaled.name, mean.name}, h.shape);
    auto square = b.node("Mul", {centered.name, centered.name}, h.shape);
    b.mark_fp32();
    auto variance = b.node("ReduceMean", {square.name}, stat, {ints_attribute("axes", {-1})});
    b.mark_fp32();
    auto eps = b.scalar("eps", 1e-5f);
    auto shifted = b.node("Add", {variance.name, eps.name}, stat);
    b.mark_fp32();
    auto deviation = b.node("Sqrt", {shifted.name}, stat);
    b.mark_fp32();
    auto normalized = b.node("Div", {centered.name, deviation.name}, h.shape);
    auto gamma = b.uniform_weight("gamma", {d}, rng, 0.8, 1.2);
    auto weighted = b.node("Mul", {normalized.name, gamma.name}, h.shape);
    auto beta = b.uniform_weight("beta", {d}, rng, -0.1, 0.1);
    auto normed = b.node("Add", {weighted.name, beta.name}, h.shape);
    // Back onto the residual stream, at its scale.
    auto half = b.scalar("half", 0.5f);
    auto contribution = b.node("Mul", {normed.name, half.name}, h.shape);
    return b.node("Add", {h.name, contribution.name}, h.shape);
  });
  b.output(out);
}

}  // namespace reduce::corpus
