// cast-fp16-conflict: one Cast to FLOAT of a float activation (exporters write `.float()` this way),
// the model's only Cast to FLOAT or DOUBLE. Minimal reproducer: the Cast alone.
#include "triggers.h"

namespace reduce::corpus {

void build_cast_fp16_conflict(GraphBuilder& b, size_t target, Random& rng) {
  auto tokens = b.input("tokens", {1, kTokens, kWidth});
  auto out = bury(b, tokens, target, 1, grow_transformer, rng, [](GraphBuilder& b, const Value& h, Random&) {
    b.begin_block();
    auto cast = b.node("Cast", {h.name}, h.shape, {int_attribute("to", static_cast<int64_t>(DType::Float))});
    b.mark_minimal();
    return cast;
  });
  b.output(out);
}

}  // namespace reduce::corpus
