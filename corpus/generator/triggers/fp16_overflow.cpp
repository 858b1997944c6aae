// Real FP16 overflow (no fault): one feature offset by 300, squared (about 90 000 > 65 504, the
// largest half) and averaged over the row (about 5 600, representable). In FP16 the Pow gives +inf.
// Minimal reproducer: the Pow alone (its cut input is fed the recorded values near 300).
#include "triggers.h"

namespace reduce::corpus {

void build_fp16_overflow(GraphBuilder& b, size_t target, Random& rng) {
  auto tokens = b.input("tokens", {1, kTokens, kWidth});
  auto out = bury(b, tokens, target, 5, grow_transformer, rng, [](GraphBuilder& b, const Value& h, Random& rng) {
    b.begin_block();
    const int64_t t = h.shape[1], d = h.shape[2];
    std::vector<float> offset(static_cast<size_t>(d), 0.0f);
    offset[rng.below(offset.size())] = 300.0f;
    auto bias = b.weight("offset", {d}, std::move(offset));
    auto shifted = b.node("Add", {h.name, bias.name}, h.shape);
    auto two = b.scalar("two", 2.0f);
    auto squared = b.node("Pow", {shifted.name, two.name}, h.shape);
    b.mark_minimal();
    auto energy = b.node("ReduceMean", {squared.name}, {1, t, 1}, {ints_attribute("axes", {-1})});
    auto scale = b.scalar("scale", static_cast<float>(static_cast<double>(d) / 90000.0));
    auto normalized = b.node("Mul", {energy.name, scale.name}, energy.shape);
    return b.node("Add", {h.name, normalized.name}, h.shape);
  });
  b.output(out);
}

}  // namespace reduce::corpus
