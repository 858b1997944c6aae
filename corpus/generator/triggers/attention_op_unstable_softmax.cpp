// attention-op (opset 23): the attention-unstable-softmax trigger on the standard Attention op, as
// exporters write attention from opset 23 on. Two heads of 8 features whose query and key
// projections carry a bias of about 7, so every logit is about 8 * 49 / sqrt(8) = 139 (> 88: exp
// overflows without max subtraction). Minimal reproducer: the Attention node alone, which the
// optimized engine runs as its fused attention kernel whatever produces Q, K and V.
#include <cmath>

#include "triggers.h"

namespace reduce::corpus {

void build_attention_op_unstable_softmax(GraphBuilder& b, size_t target, Random& rng) {
  b.set_opset(23);
  auto tokens = b.input("tokens", {1, kTokens, kWidth});
  auto out = bury(b, tokens, target, 8, grow_transformer, rng, [](GraphBuilder& b, const Value& h, Random& rng) {
    b.begin_block();
    const int64_t d = h.shape[2];
    auto q = biased_projection(b, h, rng, 6.8, 7.2);
    auto k = biased_projection(b, h, rng, 6.8, 7.2);
    auto v = biased_projection(b, h, rng, 0, 0);
    auto mixed = attention_op(b, q, k, v);
    b.mark_minimal();
    const double a = 0.5 * std::sqrt(3.0 / static_cast<double>(d));
    auto wo = b.uniform_weight("w", {d, d}, rng, -a, a);
    auto projected = b.node("MatMul", {mixed.name, wo.name}, h.shape);
    return b.node("Add", {h.name, projected.name}, h.shape);
  });
  b.output(out);
}

}  // namespace reduce::corpus
