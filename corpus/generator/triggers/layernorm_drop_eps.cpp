// layernorm-drop-eps: one LayerNorm whose input has a row zeroed by a padding mask, so that row's
// variance is exactly 0 (the reference gives beta; without eps the fused kernel gives 0/0). Minimal
// reproducer: the seven core nodes (gamma Mul and beta Add are optional in the fused pattern).
#include <cmath>

#include "triggers.h"

namespace reduce::corpus {

void build_layernorm_drop_eps(GraphBuilder& b, size_t target, Random& rng) {
  auto tokens = b.input("tokens", {1, kTokens, kWidth});
  auto out = bury(b, tokens, target, 12, grow_transformer, rng, [](GraphBuilder& b, const Value& h, Random& rng) {
    b.begin_block();
    const int64_t t = h.shape[1], d = h.shape[2];
    std::vector<float> mask(static_cast<size_t>(t), 1.0f);
    mask[rng.below(mask.size())] = 0.0f;
    auto padding = b.weight("mask", {t, 1}, std::move(mask));
    auto masked = b.node("Mul", {h.name, padding.name}, h.shape);
    auto normalized = layer_norm(b, masked, rng, /*mark_core=*/true);
    const double a = 0.5 * std::sqrt(3.0 / static_cast<double>(d));
    auto w = b.uniform_weight("w", {d, d}, rng, -a, a);
    auto projected = b.node("MatMul", {normalized.name, w.name}, h.shape);
    return b.node("Add", {h.name, projected.name}, h.shape);
  });
  b.output(out);
}

}  // namespace reduce::corpus
