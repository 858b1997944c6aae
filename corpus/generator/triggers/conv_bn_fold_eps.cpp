// conv-bn-fold-eps: one Conv followed only by a BatchNormalization whose running variances
// (1e-7..1e-6) are below its eps (1e-5): folding with sqrt(var) scales by 3x-10x too much.
// Minimal reproducer: the Conv and the BatchNormalization (the fold needs both).
#include <cmath>

#include "triggers.h"

namespace reduce::corpus {

void build_conv_bn_fold_eps(GraphBuilder& b, size_t target, Random& rng) {
  auto image = b.input("image", {1, kCnnChannels, kCnnSide, kCnnSide});
  auto out = bury(b, image, target, 4, grow_cnn, rng, [](GraphBuilder& b, const Value& h, Random& rng) {
    b.begin_block();
    const int64_t c = h.shape[1];
    const double a = std::sqrt(3.0 / static_cast<double>(9 * c));
    auto w = b.uniform_weight("w", {c, c, 3, 3}, rng, -a, a);
    auto bias = b.uniform_weight("b", {c}, rng, -0.1, 0.1);
    auto conv = b.node("Conv", {h.name, w.name, bias.name}, h.shape,
                       {ints_attribute("kernel_shape", {3, 3}), ints_attribute("pads", {1, 1, 1, 1})});
    b.mark_minimal();
    // gamma / sqrt(var + eps) is about 1: the normalized values stay about the conv's.
    auto gamma = b.uniform_weight("gamma", {c}, rng, 0.002, 0.004);
    auto beta = b.uniform_weight("beta", {c}, rng, -0.1, 0.1);
    auto mean = b.uniform_weight("mean", {c}, rng, -0.1, 0.1);
    auto var = b.uniform_weight("var", {c}, rng, 1e-7, 1e-6);
    auto norm = b.node("BatchNormalization", {conv.name, gamma.name, beta.name, mean.name, var.name}, h.shape,
                       {float_attribute("epsilon", 1e-5f)});
    b.mark_minimal();
    auto act = b.node("Tanh", {norm.name}, h.shape);
    return b.node("Add", {h.name, act.name}, h.shape);
  });
  b.output(out);
}

}  // namespace reduce::corpus
