// attention-unstable-softmax: one attention whose query and key projections carry a large bias, so
// every logit is about 140 (> 88: exp overflows without max subtraction). Minimal reproducer: the
// fused pattern MatMul, Mul (scale), Softmax, MatMul; removing any of them stops the fusion.
#include <cmath>

#include "triggers.h"

namespace reduce::corpus {

void build_attention_unstable_softmax(GraphBuilder& b, size_t target, Random& rng) {
  auto tokens = b.input("tokens", {1, kTokens, kWidth});
  auto out = bury(b, tokens, target, 12, grow_transformer, rng, [](GraphBuilder& b, const Value& h, Random& rng) {
    b.begin_block();
    const int64_t t = h.shape[1], d = h.shape[2];
    // q.k is about d * 36 = 576; scaled by 1/sqrt(d) the logits are about 144.
    auto q = biased_projection(b, h, rng, 5.8, 6.2);
    auto k = biased_projection(b, h, rng, 5.8, 6.2);
    auto v = biased_projection(b, h, rng, 0, 0);
    auto kt = b.node("Transpose", {k.name}, {1, d, t}, {ints_attribute("perm", {0, 2, 1})});
    auto scores = b.node("MatMul", {q.name, kt.name}, {1, t, t});
    b.mark_minimal();
    auto scale = b.scalar("scale", static_cast<float>(1.0 / std::sqrt(static_cast<double>(d))));
    auto scaled = b.node("Mul", {scores.name, scale.name}, scores.shape);
    b.mark_minimal();
    auto probs = b.node("Softmax", {scaled.name}, scores.shape, {int_attribute("axis", -1)});
    b.mark_minimal();
    auto mixed = b.node("MatMul", {probs.name, v.name}, h.shape);
    b.mark_minimal();
    const double a = 0.5 * std::sqrt(3.0 / static_cast<double>(d));
    auto wo = b.uniform_weight("w", {d, d}, rng, -a, a);
    auto projected = b.node("MatMul", {mixed.name, wo.name}, h.shape);
    return b.node("Add", {h.name, projected.name}, h.shape);
  });
  b.output(out);
}

}  // namespace reduce::corpus
