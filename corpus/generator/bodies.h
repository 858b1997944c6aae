// Bodies: the bulk of a corpus model around its trigger. Activations stay bounded (about 1) and
// errors travel on a residual stream, so a wrong value at the trigger reaches the output at about
// its own magnitude while rounding elsewhere stays far below any failure.
#pragma once

#include <cstddef>

#include "graph_builder.h"

namespace reduce::corpus {

// CNN-like: a [1, C, H, W] stream through residual blocks Conv3x3 -> Tanh|Sigmoid -> Conv1x1 -> Add.
// No BatchNormalization, Resize, Cast, Sub or rank-4 broadcast operand with dim1 == 1; the only
// op reading two activations is Add of equal shapes (commutative).
inline constexpr int64_t kCnnChannels = 8;
inline constexpr int64_t kCnnSide = 8;
// Appends exactly `nodes` nodes to the stream.
void grow_cnn(GraphBuilder& b, Value& stream, size_t nodes, Random& rng);

// Transformer-like: a [1, T, D] stream through pre-LayerNorm attention and MLP blocks (LayerNorm
// decomposed as exporters write it; attention decomposed too, or the standard Attention op when
// the builder's opset is 23 or more). Variances are never zero and attention logits stay small, so
// the LayerNorm and attention faults, though their patterns are everywhere, cannot fire here. No
// Cast, and no Pow of large values.
inline constexpr int64_t kTokens = 8;
inline constexpr int64_t kWidth = 16;
inline constexpr int64_t kAttentionHeads = 2;  // heads of the standard Attention op (opset 23+)
void grow_transformer(GraphBuilder& b, Value& stream, size_t nodes, Random& rng);
// x @ W (square, uniform in +-sqrt(3/d)) plus a bias uniform in [bias_lo, bias_hi) unless bias_hi is 0:
// the attention triggers' projections, whose large bias makes every logit large.
Value biased_projection(GraphBuilder& b, const Value& x, Random& rng, double bias_lo, double bias_hi);

// The standard Attention op (opset 23) on 3-D [1, T, D] q, k, v with kAttentionHeads heads, default
// scale 1/sqrt(D / heads).
Value attention_op(GraphBuilder& b, const Value& q, const Value& k, const Value& v);

// The decomposed LayerNorm over the last axis: ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt,
// Div, Mul gamma, Add beta (9 nodes). `mark_core` marks the first seven as the minimal reproducer.
Value layer_norm(GraphBuilder& b, const Value& x, Random& rng, bool mark_core = false);

// Scale of each residual contribution for a body of `blocks` blocks: keeps the stream about 1.
double residual_scale(size_t blocks);

}  // namespace reduce::corpus
