// The PP-OCR-like body: MobileNetV3-style inverted residual blocks (pointwise expand, depthwise
// 3x3 with group = channels, squeeze-excite, pointwise project, each Conv with its
// BatchNormalization, hard-swish) on a [1, C, H, W] stream, as PP-OCR's detection backbone exports.
#include <algorithm>
#include <cmath>

#include "bodies.h"

namespace reduce::corpus {

namespace {

constexpr size_t kBlockNodes = 4 + 3 + 6 + 2 + 1;  // expand, depthwise, squeeze-excite, project, Add

// Conv (group 1 or `groups`), no bias (the BatchNormalization that follows has one).
Value conv(GraphBuilder& b, const Value& x, int64_t out, int64_t kernel, int64_t groups, Random& rng) {
  const int64_t in_per_group = x.shape[1] / groups;
  const double a = std::sqrt(3.0 / static_cast<double>(in_per_group * kernel * kernel));
  auto w = b.uniform_weight("w", {out, in_per_group, kernel, kernel}, rng, -a, a);
  const int64_t pad = kernel / 2;
  return b.node("Conv", {x.name, w.name}, {x.shape[0], out, x.shape[2], x.shape[3]},
                {ints_attribute("kernel_shape", {kernel, kernel}), ints_attribute("pads", {pad, pad, pad, pad}),
                 int_attribute("group", groups)});
}

// x * HardSigmoid(x) (alpha 1/6, beta 0.5): hard-swish as Paddle2ONNX writes it below opset 14.
Value hard_swish_decomposed(GraphBuilder& b, const Value& x) {
  auto gate = b.node("HardSigmoid", {x.name}, x.shape, {float_attribute("alpha", 1.0f / 6), float_attribute("beta", 0.5f)});
  return b.node("Mul", {x.name, gate.name}, x.shape);
}

// Squeeze-excite: GlobalAveragePool, Conv 1x1 down (C/4) + Relu, Conv 1x1 up + HardSigmoid, Mul.
Value squeeze_excite(GraphBuilder& b, const Value& x, Random& rng) {
  const int64_t c = x.shape[1], r = std::max<int64_t>(c / 4, 1);
  auto pooled = b.node("GlobalAveragePool", {x.name}, {1, c, 1, 1});
  const double a1 = std::sqrt(3.0 / static_cast<double>(c)), a2 = std::sqrt(3.0 / static_cast<double>(r));
  auto w1 = b.uniform_weight("w", {r, c, 1, 1}, rng, -a1, a1);
  auto b1 = b.uniform_weight("b", {r}, rng, -0.1, 0.1);
  auto down = b.node("Conv", {pooled.name, w1.name, b1.name}, {1, r, 1, 1}, {ints_attribute("kernel_shape", {1, 1})});
  auto relu = b.node("Relu", {down.name}, down.shape);
  auto w2 = b.uniform_weight("w", {c, r, 1, 1}, rng, -a2, a2);
  auto b2 = b.uniform_weight("b", {c}, rng, -0.1, 0.1);
  auto up = b.node("Conv", {relu.name, w2.name, b2.name}, {1, c, 1, 1}, {ints_attribute("kernel_shape", {1, 1})});
  auto gate = b.node("HardSigmoid", {up.name}, up.shape, {float_attribute("alpha", 1.0f / 6), float_attribute("beta", 0.5f)});
  return b.node("Mul", {x.name, gate.name}, x.shape);
}

void channel_scale(GraphBuilder& b, Value& h, Random& rng) {
  b.begin_block();
  auto s = b.uniform_weight("scale", {h.shape[1], 1, 1}, rng, 0.95, 1.05);
  h = b.node("Mul", {h.name, s.name}, h.shape);
}

}  // namespace

Value batch_norm(GraphBuilder& b, const Value& x, Random& rng, double gamma_scale, double var_lo, double var_hi) {
  const int64_t c = x.shape[1];
  auto gamma = b.uniform_weight("gamma", {c}, rng, 0.8 * gamma_scale, 1.2 * gamma_scale);
  auto beta = b.uniform_weight("beta", {c}, rng, -0.1 * gamma_scale, 0.1 * gamma_scale);
  auto mean = b.uniform_weight("mean", {c}, rng, -0.1, 0.1);
  auto var = b.uniform_weight("var", {c}, rng, var_lo, var_hi);
  return b.node("BatchNormalization", {x.name, gamma.name, beta.name, mean.name, var.name}, x.shape,
                {float_attribute("epsilon", 1e-5f)});
}

Value ppocr_stem(GraphBuilder& b, const Value& image, Random& rng) {
  b.begin_block();
  const double a = std::sqrt(3.0 / static_cast<double>(image.shape[1] * 9));
  auto w = b.uniform_weight("w", {kPpocrChannels, image.shape[1], 3, 3}, rng, -a, a);
  auto c = b.node("Conv", {image.name, w.name}, {1, kPpocrChannels, image.shape[2] / 2, image.shape[3] / 2},
                  {ints_attribute("kernel_shape", {3, 3}), ints_attribute("pads", {1, 1, 1, 1}), ints_attribute("strides", {2, 2})});
  auto n = batch_norm(b, c, rng, 1.0, 0.5, 1.5);
  return b.node("HardSwish", {n.name}, n.shape);
}

Value inverted_residual(GraphBuilder& b, const Value& h, Random& rng, double residual, const DepthwiseBn& depthwise_bn) {
  b.begin_block();
  const int64_t c = h.shape[1], expanded = 2 * c;
  auto e = conv(b, h, expanded, 1, 1, rng);
  auto act1 = hard_swish_decomposed(b, batch_norm(b, e, rng, 1.0, 0.5, 1.5));
  auto dw = conv(b, act1, expanded, 3, expanded, rng);
  if (depthwise_bn.mark) b.mark_minimal();
  auto dn = batch_norm(b, dw, rng, depthwise_bn.gamma_scale, depthwise_bn.var_lo, depthwise_bn.var_hi);
  if (depthwise_bn.mark) b.mark_minimal();
  auto act2 = b.node("HardSwish", {dn.name}, dn.shape);
  auto se = squeeze_excite(b, act2, rng);
  auto p = conv(b, se, c, 1, 1, rng);
  auto pn = batch_norm(b, p, rng, residual, 0.5, 1.5);
  return b.node("Add", {h.name, pn.name}, h.shape);
}

void grow_ppocr(GraphBuilder& b, Value& stream, size_t nodes, Random& rng) {
  const size_t blocks = nodes / kBlockNodes;
  const double residual = residual_scale(blocks);
  for (size_t i = 0; i < blocks; ++i) stream = inverted_residual(b, stream, rng, residual, {});
  for (size_t i = blocks * kBlockNodes; i < nodes; ++i) channel_scale(b, stream, rng);
}

}  // namespace reduce::corpus
