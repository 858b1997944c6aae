// The BERT-like body: embeddings, then post-LayerNorm encoder blocks (multi-head self-attention as
// exporters write it, GELU FFN in its Erf form) on a [1, T, D] stream.
#include <cmath>

#include "bodies.h"

namespace reduce::corpus {

namespace {

constexpr int64_t kHeadSize = kBertWidth / kBertHeads;
constexpr size_t kAttentionNodes = 12 + 7 + 2 + 1 + 9;
constexpr size_t kFfnNodes = 2 + 5 + 2 + 1 + 9;

// x @ W + b, W uniform in +-scale sqrt(3/in), b in +-0.1 scale: the Linear layers of the export.
Value linear(GraphBuilder& b, const Value& x, int64_t out, Random& rng, double scale) {
  const int64_t in = x.shape.back();
  const double a = scale * std::sqrt(3.0 / static_cast<double>(in));
  auto w = b.uniform_weight("w", {in, out}, rng, -a, a);
  Shape shape = x.shape;
  shape.back() = out;
  auto y = b.node("MatMul", {x.name, w.name}, shape);
  auto bias = b.uniform_weight("b", {out}, rng, -0.1 * scale, 0.1 * scale);
  return b.node("Add", {y.name, bias.name}, shape);
}

// [1, T, D] -> [1, H, T, dh] (or [1, H, dh, T] for keys): Reshape then Transpose, as exported.
Value split_heads(GraphBuilder& b, const Value& x, bool keys) {
  const int64_t t = x.shape[1];
  auto shape = b.int64s("shape", {1, t, kBertHeads, kHeadSize});
  auto r = b.node("Reshape", {x.name, shape.name}, {1, t, kBertHeads, kHeadSize});
  if (keys) return b.node("Transpose", {r.name}, {1, kBertHeads, kHeadSize, t}, {ints_attribute("perm", {0, 2, 3, 1})});
  return b.node("Transpose", {r.name}, {1, kBertHeads, t, kHeadSize}, {ints_attribute("perm", {0, 2, 1, 3})});
}

// Self-attention, output projection, residual Add, LayerNorm (post-LN, as BERT).
void attention_unit(GraphBuilder& b, Value& h, const Value& mask, Random& rng) {
  b.begin_block();
  const int64_t t = h.shape[1], d = h.shape[2];
  auto q = split_heads(b, linear(b, h, d, rng, 1.0), false);
  auto k = split_heads(b, linear(b, h, d, rng, 1.0), true);
  auto v = split_heads(b, linear(b, h, d, rng, 1.0), false);
  auto s = b.node("MatMul", {q.name, k.name}, {1, kBertHeads, t, t});
  auto root = b.scalar("sqrt_dh", static_cast<float>(std::sqrt(static_cast<double>(kHeadSize))));
  auto scaled = b.node("Div", {s.name, root.name}, s.shape);
  auto masked = b.node("Add", {scaled.name, mask.name}, s.shape);
  auto p = b.node("Softmax", {masked.name}, s.shape, {int_attribute("axis", -1)});
  auto ctx = b.node("MatMul", {p.name, v.name}, {1, kBertHeads, t, kHeadSize});
  auto merged = b.node("Transpose", {ctx.name}, {1, t, kBertHeads, kHeadSize}, {ints_attribute("perm", {0, 2, 1, 3})});
  auto shape = b.int64s("shape", {1, t, d});
  auto flat = b.node("Reshape", {merged.name, shape.name}, h.shape);
  auto out = linear(b, flat, d, rng, 1.0);
  auto sum = b.node("Add", {h.name, out.name}, h.shape);
  h = layer_norm(b, sum, rng);
}

// GELU as exporters write it: x * 0.5 * (1 + erf(x / sqrt 2)).
Value gelu(GraphBuilder& b, const Value& x) {
  auto root2 = b.scalar("sqrt2", 1.4142135f);
  auto scaled = b.node("Div", {x.name, root2.name}, x.shape);
  auto e = b.node("Erf", {scaled.name}, x.shape);
  auto one = b.scalar("one", 1.0f);
  auto shifted = b.node("Add", {e.name, one.name}, x.shape);
  auto gated = b.node("Mul", {x.name, shifted.name}, x.shape);
  auto half = b.scalar("half", 0.5f);
  return b.node("Mul", {gated.name, half.name}, x.shape);
}

// Intermediate Linear (4x), GELU, output Linear, residual Add, LayerNorm.
void ffn_unit(GraphBuilder& b, Value& h, Random& rng) {
  b.begin_block();
  auto up = linear(b, h, 4 * h.shape[2], rng, 1.0);
  auto down = linear(b, gelu(b, up), h.shape[2], rng, 1.0);
  auto sum = b.node("Add", {h.name, down.name}, h.shape);
  h = layer_norm(b, sum, rng);
}

void feature_scale(GraphBuilder& b, Value& h, Random& rng) {
  b.begin_block();
  auto s = b.uniform_weight("scale", {h.shape[2]}, rng, 0.95, 1.05);
  h = b.node("Mul", {h.name, s.name}, h.shape);
}

}  // namespace

Value bert_embeddings(GraphBuilder& b, const Value& ids, Random& rng) {
  b.begin_block();
  const int64_t t = ids.shape[1];
  auto words = b.uniform_weight("word_embeddings", {kBertVocab, kBertWidth}, rng, -1.0, 1.0);
  auto e = b.node("Gather", {words.name, ids.name}, {1, t, kBertWidth});
  auto positions = b.uniform_weight("position_embeddings", {1, t, kBertWidth}, rng, -0.5, 0.5);
  auto with_positions = b.node("Add", {e.name, positions.name}, e.shape);
  auto token_type = b.uniform_weight("token_type_embedding", {kBertWidth}, rng, -0.5, 0.5);
  auto sum = b.node("Add", {with_positions.name, token_type.name}, e.shape);
  return layer_norm(b, sum, rng);
}

Value bert_attention_mask(GraphBuilder& b, int64_t tokens, int64_t padded) {
  std::vector<float> mask(static_cast<size_t>(tokens), 0.0f);
  mask[static_cast<size_t>(padded)] = -10000.0f;
  return b.weight("extended_attention_mask", {1, 1, 1, tokens}, std::move(mask));
}

void grow_bert(GraphBuilder& b, Value& stream, size_t nodes, const Value& mask, Random& rng) {
  // Attention and FFN halves alternate (an encoder block is one of each); whatever is left
  // after the last half that fits becomes per-feature scales.
  size_t left = nodes;
  bool attention_next = true;
  while (left >= kFfnNodes) {
    if (attention_next && left >= kAttentionNodes) {
      attention_unit(b, stream, mask, rng);
      left -= kAttentionNodes;
    } else {
      ffn_unit(b, stream, rng);
      left -= kFfnNodes;
    }
    attention_next = !attention_next;
  }
  for (; left > 0; --left) feature_scale(b, stream, rng);
}

}  // namespace reduce::corpus
