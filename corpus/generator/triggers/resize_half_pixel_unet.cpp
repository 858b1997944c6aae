// unet-resize-half-pixel: a UNet (two levels down, a middle, two levels up with skip Concats,
// GroupNorm and SiLU everywhere) whose lower decoder level upsamples with a bilinear Resize
// (half_pixel, as F.interpolate(mode="bilinear") exports) and the upper one with ConvTranspose.
// Minimal reproducer: the Resize alone, the model's only one.
#include <cmath>

#include "triggers.h"

namespace reduce::corpus {

namespace {

// The fixed nodes: stem Conv, two downsamplings, the Resize, two skip joins (2 each), the
// ConvTranspose, the head.
constexpr size_t kFixedNodes = 1 + 2 + 1 + 4 + 1 + 8;

struct Layout {
  size_t enc0 = 0, enc1 = 0, mid = 0, dec1 = 0, dec0 = 0;  // ResNet blocks per stage
  size_t scales_before = 0, scales_after = 0;               // per-channel scales filling the rest
};

// Half of the blocks (and of the filling) before the Resize, half after, so that it sits in the middle.
Layout layout(size_t target) {
  const size_t free = target > kFixedNodes ? target - kFixedNodes : 0;
  const size_t blocks = free / kUnetResnetNodes, fill = free % kUnetResnetNodes;
  Layout l;
  const size_t before = blocks / 2, after = blocks - before;
  l.enc0 = before / 3 + (before % 3 > 0);
  l.enc1 = before / 3 + (before % 3 > 1);
  l.mid = before / 3;
  l.dec1 = after / 2 + after % 2;
  l.dec0 = after / 2;
  l.scales_before = fill / 2;
  l.scales_after = fill - fill / 2;
  return l;
}

Value blocks(GraphBuilder& b, Value h, size_t n, Random& rng, double residual) {
  for (size_t i = 0; i < n; ++i) h = unet_resnet_block(b, h, rng, residual);
  return h;
}

}  // namespace

void build_resize_half_pixel_unet(GraphBuilder& b, size_t target, Random& rng) {
  const Layout l = layout(target);
  const double residual = residual_scale(l.enc0 + l.enc1 + l.mid + l.dec1 + l.dec0);
  auto x = b.input("x", {1, 4, 16, 16});
  b.begin_block();
  const double a = std::sqrt(3.0 / (4.0 * 9));
  auto w = b.uniform_weight("w", {kUnetChannels, 4, 3, 3}, rng, -a, a);
  auto stem = b.node("Conv", {x.name, w.name}, {1, kUnetChannels, 16, 16},
                     {ints_attribute("kernel_shape", {3, 3}), ints_attribute("pads", {1, 1, 1, 1})});
  auto skip0 = blocks(b, stem, l.enc0, rng, residual);
  auto skip1 = blocks(b, unet_downsample(b, skip0, rng), l.enc1, rng, residual);
  auto h = blocks(b, unet_downsample(b, skip1, rng), l.mid, rng, residual);
  for (size_t i = 0; i < l.scales_before; ++i) unet_channel_scale(b, h, rng);
  b.begin_block();
  auto scales = b.weight("scales", {4}, {1.0f, 1.0f, 2.0f, 2.0f});
  auto up1 = b.node("Resize", {h.name, "", scales.name}, {1, kUnetChannels, 2 * h.shape[2], 2 * h.shape[3]},
                    {string_attribute("mode", "linear"), string_attribute("coordinate_transformation_mode", "half_pixel")});
  b.mark_minimal();
  h = blocks(b, unet_skip_join(b, up1, skip1, rng), l.dec1, rng, residual);
  h = blocks(b, unet_skip_join(b, unet_conv_transpose_up(b, h, rng), skip0, rng), l.dec0, rng, residual);
  for (size_t i = 0; i < l.scales_after; ++i) unet_channel_scale(b, h, rng);
  b.output(unet_head(b, h, rng));
}

}  // namespace reduce::corpus
