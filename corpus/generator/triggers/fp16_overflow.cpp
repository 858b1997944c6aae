// Real FP16 overflow (no fault): an energy head, ReduceSum over the features of Pow(x, 2), where x
// is the stream offset by about 100. Each square (about 10 000) fits in FP16, their sum over 16
// features (about 160 000) does not: the ReduceSum gives +inf. The head is a second graph output,
// so the ReduceSum is the only node that fails alone: any node reading an overflowing value would
// fail alone too, since the engine rounds its inputs to FP16 (see corpus/README.md).
#include "triggers.h"

namespace reduce::corpus {

void build_fp16_overflow(GraphBuilder& b, size_t target, Random& rng) {
  auto tokens = b.input("tokens", {1, kTokens, kWidth});
  Value energy;
  auto out = bury(b, tokens, target, 3, grow_transformer, rng, [&](GraphBuilder& b, const Value& h, Random& rng) {
    b.begin_block();
    const int64_t t = h.shape[1], d = h.shape[2];
    // |x| stays within [85, 115]: squares <= 13 225 < 65 504, sums >= 16 * 85^2 = 115 600 > 65 504.
    auto offset = b.uniform_weight("offset", {d}, rng, 90.0, 110.0);
    auto shifted = b.node("Add", {h.name, offset.name}, h.shape);
    auto two = b.scalar("two", 2.0f);
    auto squared = b.node("Pow", {shifted.name, two.name}, h.shape);
    auto axes = b.int64s("axes", {-1});
    energy = b.node("ReduceSum", {squared.name, axes.name}, {1, t, 1});
    b.mark_minimal();
    b.mark_fp32();  // as a precision family: the sum held in FP32 is the whole fix
    return h;
  });
  b.output(out);
  b.output(energy);
}

}  // namespace reduce::corpus
