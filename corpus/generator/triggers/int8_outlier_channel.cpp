// int8-outlier-channel (quantized family): a projection whose weight has one outlier output channel
// (|w| about 100 where the others are within sqrt(3/d)), masked to 0 right after it, as LLM outlier
// features are. Per channel INT8 would keep every channel; per tensor, the scale is about 100 / 127,
// and the other channels' weights round to 0 or one step: the projection's contribution to the
// stream is lost. That MatMul is the one node to leave in float.
#include "triggers.h"

#include <cmath>

namespace reduce::corpus {

void build_int8_outlier_channel(GraphBuilder& b, size_t target, Random& rng) {
  auto tokens = b.input("tokens", {1, kTokens, kWidth});
  auto out = bury(b, tokens, target, 5, grow_transformer, rng, [](GraphBuilder& b, const Value& h, Random& rng) {
    b.begin_block();
    const int64_t d = h.shape[2];
    const double a = std::sqrt(3.0 / static_cast<double>(d));
    std::vector<float> w = rng.uniform_values(static_cast<size_t>(d * d), -a, a);
    for (int64_t k = 0; k < d; ++k) w[static_cast<size_t>(k * d)] = static_cast<float>(k % 2 ? 100.0 : -100.0);
    auto weight = b.weight("w", {d, d}, std::move(w));
    auto projected = b.node("MatMul", {h.name, weight.name}, h.shape);
    b.mark_fp32();
    std::vector<float> keep(static_cast<size_t>(d), 1.0f);
    keep[0] = 0.0f;
    auto mask = b.weight("mask", {d}, std::move(keep));
    auto masked = b.node("Mul", {projected.name, mask.name}, h.shape);
    auto half = b.scalar("half", 0.5f);
    auto contribution = b.node("Mul", {masked.name, half.name}, h.shape);
    return b.node("Add", {h.name, contribution.name}, h.shape);
  });
  b.output(out);
}

}  // namespace reduce::corpus
