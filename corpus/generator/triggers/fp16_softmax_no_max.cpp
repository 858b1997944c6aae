// fp16-softmax-no-max (precision family): one attention whose softmax is written out as
// Exp(x) / ReduceSum(Exp(x)) without subtracting the row max, on logits shifted by a constant
// bias of about 13 (as an attention bias or a temperature written into the graph). exp(11.1) is
// FP16's largest value: every Exp overflows to +inf and Inf / Inf gives NaN. Kept in FP32, the
// Exp, the ReduceSum and the Div hold the large values; each is needed (a node left in FP16 that
// reads one of them sees it rounded to +inf), and the probabilities the Div writes fit FP16.
#include <cmath>

#include "triggers.h"

namespace reduce::corpus {

void build_fp16_softmax_no_max(GraphBuilder& b, size_t target, Random& rng) {
  auto tokens = b.input("tokens", {1, kTokens, kWidth});
  auto out = bury(b, tokens, target, 13, grow_transformer, rng, [](GraphBuilder& b, const Value& h, Random& rng) {
    b.begin_block();
    const int64_t t = h.shape[1], d = h.shape[2];
    const double a = std::sqrt(3.0 / static_cast<double>(d));
    auto project = [&](double scale) {
      auto w = b.uniform_weight("w", {d, d}, rng, -a * scale, a * scale);
      return b.node("MatMul", {h.name, w.name}, h.shape);
    };
    auto q = project(1.0), k = project(1.0), v = project(1.0);
    auto kt = b.node("Transpose", {k.name}, {1, d, t}, {ints_attribute("perm", {0, 2, 1})});
    auto scores = b.node("MatMul", {q.name, kt.name}, {1, t, t});
    auto scale = b.scalar("scale", static_cast<float>(1.0 / std::sqrt(static_cast<double>(d))));
    auto scaled = b.node("Mul", {scores.name, scale.name}, scores.shape);
    auto bias = b.uniform_weight("bias", {t, t}, rng, 12.5, 13.5);
    auto logits = b.node("Add", {scaled.name, bias.name}, scores.shape);
    auto exps = b.node("Exp", {logits.name}, scores.shape);
    b.mark_fp32();
    auto axes = b.int64s("axes", {-1});
    auto sums = b.node("ReduceSum", {exps.name, axes.name}, {1, t, 1});
    b.mark_fp32();
    auto probs = b.node("Div", {exps.name, sums.name}, scores.shape);
    b.mark_fp32();
    auto mixed = b.node("MatMul", {probs.name, v.name}, h.shape);
    auto wo = b.uniform_weight("w", {d, d}, rng, -0.5 * a, 0.5 * a);
    auto projected = b.node("MatMul", {mixed.name, wo.name}, h.shape);
    return b.node("Add", {h.name, projected.name}, h.shape);
  });
  b.output(out);
}

}  // namespace reduce::corpus
