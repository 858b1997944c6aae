// The UNet-like parts: GroupNorm as exporters write it, SiLU, ResNet blocks, down- and upsampling,
// skip joins, on [1, C, H, W] feature maps.
#include <cmath>

#include "bodies.h"

namespace reduce::corpus {

namespace {

Value conv3x3(GraphBuilder& b, const Value& x, Random& rng, double scale, int64_t stride = 1) {
  const int64_t c = x.shape[1];
  const double a = scale * std::sqrt(3.0 / static_cast<double>(9 * c));
  auto w = b.uniform_weight("w", {c, c, 3, 3}, rng, -a, a);
  auto bias = b.uniform_weight("b", {c}, rng, -0.1 * scale, 0.1 * scale);
  return b.node("Conv", {x.name, w.name, bias.name}, {1, c, x.shape[2] / stride, x.shape[3] / stride},
                {ints_attribute("kernel_shape", {3, 3}), ints_attribute("pads", {1, 1, 1, 1}),
                 ints_attribute("strides", {stride, stride})});
}

// x * Sigmoid(x), as torch.onnx writes SiLU.
Value silu(GraphBuilder& b, const Value& x) {
  auto s = b.node("Sigmoid", {x.name}, x.shape);
  return b.node("Mul", {x.name, s.name}, x.shape);
}

}  // namespace

Value group_norm(GraphBuilder& b, const Value& x, Random& rng) {
  const int64_t c = x.shape[1];
  const int64_t groups = c / 2;
  auto grouped = b.int64s("shape", {1, groups, -1});
  auto r = b.node("Reshape", {x.name, grouped.name}, {1, groups, c / groups * x.shape[2] * x.shape[3]});
  auto ones = b.weight("ones", {groups}, std::vector<float>(static_cast<size_t>(groups), 1.0f));
  auto zeros = b.weight("zeros", {groups}, std::vector<float>(static_cast<size_t>(groups), 0.0f));
  auto n = b.node("InstanceNormalization", {r.name, ones.name, zeros.name}, r.shape, {float_attribute("epsilon", 1e-5f)});
  auto back = b.int64s("shape", {1, c, x.shape[2], x.shape[3]});
  auto restored = b.node("Reshape", {n.name, back.name}, x.shape);
  auto gamma = b.uniform_weight("gamma", {c, 1, 1}, rng, 0.8, 1.2);
  auto scaled = b.node("Mul", {restored.name, gamma.name}, x.shape);
  auto beta = b.uniform_weight("beta", {c, 1, 1}, rng, -0.1, 0.1);
  return b.node("Add", {scaled.name, beta.name}, x.shape);
}

Value unet_resnet_block(GraphBuilder& b, const Value& h, Random& rng, double residual) {
  b.begin_block();
  auto c1 = conv3x3(b, silu(b, group_norm(b, h, rng)), rng, 1.0);
  auto c2 = conv3x3(b, silu(b, group_norm(b, c1, rng)), rng, residual);
  return b.node("Add", {h.name, c2.name}, h.shape);
}

Value unet_downsample(GraphBuilder& b, const Value& h, Random& rng) {
  b.begin_block();
  return conv3x3(b, h, rng, 1.0, 2);
}

Value unet_conv_transpose_up(GraphBuilder& b, const Value& h, Random& rng) {
  b.begin_block();
  const int64_t c = h.shape[1];
  const double a = std::sqrt(3.0 / static_cast<double>(c));
  auto w = b.uniform_weight("w", {c, c, 2, 2}, rng, -a, a);
  auto bias = b.uniform_weight("b", {c}, rng, -0.1, 0.1);
  return b.node("ConvTranspose", {h.name, w.name, bias.name}, {1, c, 2 * h.shape[2], 2 * h.shape[3]},
                {ints_attribute("kernel_shape", {2, 2}), ints_attribute("strides", {2, 2})});
}

Value unet_skip_join(GraphBuilder& b, const Value& up, const Value& skip, Random& rng) {
  b.begin_block();
  const int64_t c = up.shape[1];
  auto joined = b.node("Concat", {up.name, skip.name}, {1, 2 * c, up.shape[2], up.shape[3]}, {int_attribute("axis", 1)});
  const double a = std::sqrt(3.0 / static_cast<double>(2 * c));
  auto w = b.uniform_weight("w", {c, 2 * c, 1, 1}, rng, -a, a);
  auto bias = b.uniform_weight("b", {c}, rng, -0.1, 0.1);
  return b.node("Conv", {joined.name, w.name, bias.name}, up.shape, {ints_attribute("kernel_shape", {1, 1})});
}

Value unet_head(GraphBuilder& b, const Value& h, Random& rng) {
  b.begin_block();
  return conv3x3(b, silu(b, group_norm(b, h, rng)), rng, 1.0);
}

void unet_channel_scale(GraphBuilder& b, Value& h, Random& rng) {
  b.begin_block();
  auto s = b.uniform_weight("scale", {h.shape[1], 1, 1}, rng, 0.95, 1.05);
  h = b.node("Mul", {h.name, s.name}, h.shape);
}

}  // namespace reduce::corpus
