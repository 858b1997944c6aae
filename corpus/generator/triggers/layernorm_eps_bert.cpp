// bert-layernorm-eps: a BERT-like encoder whose hidden states are multiplied by the padding mask
// once (as models that zero padded positions before re-normalizing do): the padded token's row
// has variance exactly 0 at the LayerNorm that follows, where the fused kernel without eps gives
// 0/0. Minimal reproducer: that LayerNorm's seven core nodes, as in layernorm_drop_eps.cpp.
#include "triggers.h"

namespace reduce::corpus {

void build_layernorm_eps_bert(GraphBuilder& b, size_t target, Random& rng) {
  auto ids = b.input("input_ids", {1, kBertTokens}, DType::Int64);
  // Token 0 is [CLS]; one later token is padding, masked in every attention.
  const int64_t padded = 1 + static_cast<int64_t>(rng.below(kBertTokens - 1));
  auto mask = bert_attention_mask(b, kBertTokens, padded);
  auto hidden = bert_embeddings(b, ids, rng);
  auto grow = [&mask](GraphBuilder& b, Value& stream, size_t nodes, Random& rng) { grow_bert(b, stream, nodes, mask, rng); };
  auto out = bury(b, hidden, target, 10, grow, rng, [padded](GraphBuilder& b, const Value& h, Random& rng) {
    b.begin_block();
    std::vector<float> keep(static_cast<size_t>(h.shape[1]), 1.0f);
    keep[static_cast<size_t>(padded)] = 0.0f;
    auto padding = b.weight("padding_mask", {1, h.shape[1], 1}, std::move(keep));
    auto masked = b.node("Mul", {h.name, padding.name}, h.shape);
    return layer_norm(b, masked, rng, /*mark_core=*/true);
  });
  b.output(out);
}

}  // namespace reduce::corpus
