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

// BERT-like: input_ids [1, T] -> word, position and token-type embeddings -> LayerNorm, then
// post-LayerNorm encoder blocks: multi-head self-attention (Reshape/Transpose per head, scores
// divided by sqrt(head size), an additive extended attention mask [1, 1, 1, T], Softmax) and a GELU
// FFN in its Erf form, each followed by a residual Add and a decomposed LayerNorm. Every row keeps
// a variance (the embeddings and the LayerNorm betas are random), so layernorm-drop-eps cannot fire.
inline constexpr int64_t kBertTokens = 8;
inline constexpr int64_t kBertWidth = 16;
inline constexpr int64_t kBertHeads = 2;
inline constexpr int64_t kBertVocab = 16;  // the oracle's integer inputs are 0..9
Value bert_embeddings(GraphBuilder& b, const Value& ids, Random& rng);
// The additive mask of a padded sequence: 0, and -10000 at token `padded`.
Value bert_attention_mask(GraphBuilder& b, int64_t tokens, int64_t padded);
// Appends exactly `nodes` nodes: attention and FFN halves of encoder blocks alternating, then
// per-feature scales for what no half fills.
void grow_bert(GraphBuilder& b, Value& stream, size_t nodes, const Value& mask, Random& rng);

// PP-OCR-like: a stride-2 stem (Conv, BatchNormalization, HardSwish) to [1, C, H/2, W/2], then
// MobileNetV3-style inverted residual blocks: pointwise expand + BN + hard-swish written as
// x * HardSigmoid(x), depthwise 3x3 (group = channels) + BN + HardSwish, squeeze-excite
// (GlobalAveragePool, Conv, Relu, Conv, HardSigmoid, Mul), pointwise project + BN, residual Add.
// Every BatchNormalization has running variances in [0.5, 1.5], far above its eps.
inline constexpr int64_t kPpocrChannels = 8;
Value ppocr_stem(GraphBuilder& b, const Value& image, Random& rng);
// BatchNormalization with gamma about `gamma_scale`, running variances uniform in [var_lo, var_hi), eps 1e-5.
Value batch_norm(GraphBuilder& b, const Value& x, Random& rng, double gamma_scale, double var_lo, double var_hi);
// How an inverted residual block's depthwise BatchNormalization is made (the trigger's differs).
struct DepthwiseBn {
  bool mark = false;  // mark the depthwise Conv and its BatchNormalization as the minimal reproducer
  double gamma_scale = 1.0;
  double var_lo = 0.5, var_hi = 1.5;
};
Value inverted_residual(GraphBuilder& b, const Value& h, Random& rng, double residual, const DepthwiseBn& depthwise_bn);
void grow_ppocr(GraphBuilder& b, Value& stream, size_t nodes, Random& rng);

// UNet-like parts on [1, C, H, W]: GroupNorm as torch.onnx writes it (Reshape [1, G, -1],
// InstanceNormalization, Reshape back, Mul gamma [C,1,1], Add beta [C,1,1]; 5 nodes), SiLU as
// x * Sigmoid(x), ResNet blocks (GroupNorm, SiLU, Conv3x3, twice, residual Add; 17 nodes),
// a stride-2 Conv down, a ConvTranspose 2x2 stride 2 up, a skip join (Concat + Conv 1x1; 2 nodes),
// and a head (GroupNorm, SiLU, Conv3x3; 8 nodes). No Resize.
inline constexpr int64_t kUnetChannels = 8;
inline constexpr size_t kUnetResnetNodes = 17;
Value group_norm(GraphBuilder& b, const Value& x, Random& rng);
Value unet_resnet_block(GraphBuilder& b, const Value& h, Random& rng, double residual);
Value unet_downsample(GraphBuilder& b, const Value& h, Random& rng);
Value unet_conv_transpose_up(GraphBuilder& b, const Value& h, Random& rng);
Value unet_skip_join(GraphBuilder& b, const Value& up, const Value& skip, Random& rng);
Value unet_head(GraphBuilder& b, const Value& h, Random& rng);
void unet_channel_scale(GraphBuilder& b, Value& h, Random& rng);

// Scale of each residual contribution for a body of `blocks` blocks: keeps the stream about 1.
double residual_scale(size_t blocks);

}  // namespace reduce::corpus
