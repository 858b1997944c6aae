// input-binding-order: two same-shape inputs declared out of alphabetical order ("image", then
// "background"); one Sub(image, background) reads both and is added to the stream in the middle.
// Minimal reproducer: the Sub alone. Every other node reading two activations is an Add of equal
// shapes (commutative), so no other single node notices swapped inputs.
#include "triggers.h"

namespace reduce::corpus {

void build_input_binding_order(GraphBuilder& b, size_t target, Random& rng) {
  const Shape shape{1, kCnnChannels, kCnnSide, kCnnSide};
  auto image = b.input("image", shape);
  auto background = b.input("background", shape);
  auto out = bury(b, image, target, 2, grow_cnn, rng, [&](GraphBuilder& b, const Value& h, Random&) {
    b.begin_block();
    auto foreground = b.node("Sub", {image.name, background.name}, shape);
    b.mark_minimal();
    return b.node("Add", {h.name, foreground.name}, shape);
  });
  b.output(out);
}

}  // namespace reduce::corpus
