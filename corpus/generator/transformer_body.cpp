// The transformer-like body: pre-LayerNorm attention and MLP blocks on a [1, T, D] stream.
#include <cmath>

#include "bodies.h"

namespace reduce::corpus {

Value projection(GraphBuilder& b, const Value& x, int64_t out, Random& rng, double scale) {
  const int64_t in = x.shape.back();
  const double a = scale * std::sqrt(3.0 / static_cast<double>(in));
  auto w = b.uniform_weight("w", {in, out}, rng, -a, a);
  Shape shape = x.shape;
  shape.back() = out;
  return b.node("MatMul", {x.name, w.name}, shape);
}

void feature_scale(GraphBuilder& b, Value& h, Random& rng) {
  b.begin_block();
  auto s = b.uniform_weight("scale", {h.shape[2]}, rng, 0.95, 1.05);
  h = b.node("Mul", {h.name, s.name}, h.shape);
}

namespace {

constexpr size_t kLayerNormNodes = 9;
constexpr size_t kMlpNodes = kLayerNormNodes + 5;
constexpr size_t kSmallNodes = 3;

// Attention blocks are decomposed (10 nodes after the LayerNorm) before opset 23, as exporters
// wrote them, and the standard Attention op from opset 23 on (6 nodes).
size_t attention_nodes(const GraphBuilder& b) { return kLayerNormNodes + (b.opset() >= 23 ? 6 : 10); }

// Self-attention; logits q.k / sqrt(head size) of LayerNorm-ed rows stay about 1. Decomposed, one
// head; from opset 23 the Attention op with kAttentionHeads heads.
void attention_block(GraphBuilder& b, Value& h, Random& rng, double eps) {
  b.begin_block();
  const int64_t t = h.shape[1], d = h.shape[2];
  auto n = layer_norm(b, h, rng);
  auto q = projection(b, n, d, rng, 1.0);
  auto k = projection(b, n, d, rng, 1.0);
  auto v = projection(b, n, d, rng, 1.0);
  if (b.opset() >= 23) {
    auto o = attention_op(b, q, k, v);
    auto out = projection(b, o, d, rng, eps);
    h = b.node("Add", {h.name, out.name}, h.shape);
    return;
  }
  auto kt = b.node("Transpose", {k.name}, {1, d, t}, {ints_attribute("perm", {0, 2, 1})});
  auto s = b.node("MatMul", {q.name, kt.name}, {1, t, t});
  auto scale = b.scalar("scale", static_cast<float>(1.0 / std::sqrt(static_cast<double>(d))));
  auto ss = b.node("Mul", {s.name, scale.name}, s.shape);
  auto p = b.node("Softmax", {ss.name}, s.shape, {int_attribute("axis", -1)});
  auto o = b.node("MatMul", {p.name, v.name}, h.shape);
  auto out = projection(b, o, d, rng, eps);
  h = b.node("Add", {h.name, out.name}, h.shape);
}

void mlp_block(GraphBuilder& b, Value& h, Random& rng, double eps) {
  b.begin_block();
  const int64_t d = h.shape[2];
  auto n = layer_norm(b, h, rng);
  auto up = projection(b, n, 2 * d, rng, 1.0);
  auto bias = b.uniform_weight("b", {2 * d}, rng, -0.1, 0.1);
  auto biased = b.node("Add", {up.name, bias.name}, up.shape);
  auto act = b.node(rng.below(3) == 0 ? "Sigmoid" : "Tanh", {biased.name}, up.shape);
  auto down = projection(b, act, d, rng, eps);
  h = b.node("Add", {h.name, down.name}, h.shape);
}

void small_block(GraphBuilder& b, Value& h, Random& rng, double eps) {
  b.begin_block();
  auto m = projection(b, h, h.shape[2], rng, eps);
  auto act = b.node("Tanh", {m.name}, m.shape);
  h = b.node("Add", {h.name, act.name}, h.shape);
}

}  // namespace

Value attention_op(GraphBuilder& b, const Value& q, const Value& k, const Value& v) {
  auto y = b.node("Attention", {q.name, k.name, v.name}, q.shape,
                  {int_attribute("q_num_heads", kAttentionHeads), int_attribute("kv_num_heads", kAttentionHeads)});
  // ONNX shape inference before opset 23 stops at Attention: without its output's type, every value
  // after it would be untyped for a tool on an older ONNX (each Attention would cost an inference
  // round to get past).
  b.declare(y);
  return y;
}

Value layer_norm(GraphBuilder& b, const Value& x, Random& rng, bool mark_core) {
  const int64_t d = x.shape.back();
  Shape stat = x.shape;
  stat.back() = 1;
  auto mark = [&] {
    if (mark_core) b.mark_minimal();
  };
  // ReduceMean takes its axes as an attribute before opset 18 and as an input from then on.
  const bool axes_input = b.opset() >= 18;
  auto reduce_mean = [&](const Value& in) {
    if (!axes_input) return b.node("ReduceMean", {in.name}, stat, {ints_attribute("axes", {-1})});
    auto axes = b.int64s("axes", {-1});
    return b.node("ReduceMean", {in.name, axes.name}, stat);
  };
  auto mean = reduce_mean(x);
  mark();
  auto centered = b.node("Sub", {x.name, mean.name}, x.shape);
  mark();
  auto two = b.scalar("two", 2.0f);
  auto squared = b.node("Pow", {centered.name, two.name}, x.shape);
  mark();
  auto variance = reduce_mean(squared);
  mark();
  auto eps = b.scalar("eps", 1e-5f);
  auto shifted = b.node("Add", {variance.name, eps.name}, stat);
  mark();
  auto deviation = b.node("Sqrt", {shifted.name}, stat);
  mark();
  auto normalized = b.node("Div", {centered.name, deviation.name}, x.shape);
  mark();
  auto gamma = b.uniform_weight("gamma", {d}, rng, 0.8, 1.2);
  auto scaled = b.node("Mul", {normalized.name, gamma.name}, x.shape);
  auto beta = b.uniform_weight("beta", {d}, rng, -0.1, 0.1);
  return b.node("Add", {scaled.name, beta.name}, x.shape);
}

void grow_transformer(GraphBuilder& b, Value& stream, size_t nodes, Random& rng) {
  const size_t attention = attention_nodes(b);
  const double eps = residual_scale(nodes / ((attention + kMlpNodes) / 2) + 1);
  size_t left = nodes;
  while (left >= attention + kMlpNodes) {
    attention_block(b, stream, rng, eps);
    mlp_block(b, stream, rng, eps);
    left -= attention + kMlpNodes;
  }
  for (; left >= kMlpNodes; left -= kMlpNodes) mlp_block(b, stream, rng, eps);
  for (; left >= kSmallNodes; left -= kSmallNodes) small_block(b, stream, rng, eps);
  for (; left > 0; --left) feature_scale(b, stream, rng);
}

Value biased_projection(GraphBuilder& b, const Value& x, Random& rng, double bias_lo, double bias_hi) {
  const int64_t d = x.shape.back();
  const double a = std::sqrt(3.0 / static_cast<double>(d));
  auto w = b.uniform_weight("w", {d, d}, rng, -a, a);
  auto y = b.node("MatMul", {x.name, w.name}, x.shape);
  if (bias_hi == 0) return y;
  auto bias = b.uniform_weight("b", {d}, rng, bias_lo, bias_hi);
  return b.node("Add", {y.name, bias.name}, x.shape);
}

}  // namespace reduce::corpus
