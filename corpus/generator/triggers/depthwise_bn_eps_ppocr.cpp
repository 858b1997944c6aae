// ppocr-depthwise-bn-eps: a PP-OCR-like CNN with one inverted residual block whose depthwise
// Conv (group = channels) feeds a BatchNormalization with running variances (1e-7..1e-6) below
// its eps (1e-5), as channels that never fired in training end up; folding with sqrt(var) scales
// them by 3x-10x too much. Minimal reproducer: the depthwise Conv and its BatchNormalization (the
// fold needs both); every other BatchNormalization's variances are far above eps.
#include "triggers.h"

namespace reduce::corpus {

void build_depthwise_bn_eps_ppocr(GraphBuilder& b, size_t target, Random& rng) {
  auto image = b.input("image", {1, 3, 16, 32});
  auto stem = ppocr_stem(b, image, rng);
  auto out = bury(b, stem, target, 16, grow_ppocr, rng, [](GraphBuilder& b, const Value& h, Random& rng) {
    // gamma / sqrt(var + eps) is about 1: the block's values stay about the body's.
    return inverted_residual(b, h, rng, 0.25, {.mark = true, .gamma_scale = 0.003, .var_lo = 1e-7, .var_hi = 1e-6});
  });
  b.output(out);
}

}  // namespace reduce::corpus
