// resize-half-pixel: one Resize x2 (linear, half_pixel) from H/2 to H in a CNN, the model's only
// Resize. Minimal reproducer: the Resize alone.
#include "triggers.h"

namespace reduce::corpus {

void build_resize_half_pixel(GraphBuilder& b, size_t target, Random& rng) {
  auto image = b.input("image", {1, kCnnChannels, kCnnSide / 2, kCnnSide / 2});
  auto out = bury(b, image, target, 1, grow_cnn, rng, [](GraphBuilder& b, const Value& h, Random&) {
    b.begin_block();
    auto scales = b.weight("scales", {4}, {1.0f, 1.0f, 2.0f, 2.0f});
    auto up = b.node("Resize", {h.name, "", scales.name}, {h.shape[0], h.shape[1], 2 * h.shape[2], 2 * h.shape[3]},
                     {string_attribute("mode", "linear"), string_attribute("coordinate_transformation_mode", "half_pixel")});
    b.mark_minimal();
    return up;
  });
  b.output(out);
}

}  // namespace reduce::corpus
