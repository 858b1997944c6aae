// Pass conv-bn-fold: a BatchNormalization (inference mode) that alone consumes a Conv is folded into
// the Conv's weights and bias: W' = W * k, B' = (B - mean) * k + beta, k = scale / sqrt(var + eps).
// Fault conv-bn-fold-eps: k = scale / sqrt(var), as folding code that forgets epsilon does.
#include <cmath>

#include "plan_graph.h"

namespace reduce::opt {

namespace {

// The per-channel parameters of a BatchNormalization, when all are float constants of `channels` values.
bool channel_constant(const PlanGraph& g, const std::string& v, int64_t channels) {
  const Tensor* t = g.constant(v);
  return t && t->dtype() == DType::Float && t->rank() == 1 && t->shape()[0] == channels;
}

Expected<int> fold_one(PlanGraph& g, size_t conv_index, size_t bn_index) {
  const Node conv = g.node(conv_index);
  const Node bn = g.node(bn_index);
  const Tensor w = *g.constant(conv.inputs[1]);
  const int64_t channels = w.shape()[0];
  const bool has_bias = conv.inputs.size() > 2 && !conv.inputs[2].empty();
  const double eps = bn.attribute("epsilon") ? bn.attribute("epsilon")->f : 1e-5;
  auto scale = g.constant(bn.inputs[1])->data<float>();
  auto beta = g.constant(bn.inputs[2])->data<float>();
  auto mean = g.constant(bn.inputs[3])->data<float>();
  auto var = g.constant(bn.inputs[4])->data<float>();
  std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
  if (has_bias) {
    auto b = g.constant(conv.inputs[2])->data<float>();
    bias.assign(b.begin(), b.end());
  }
  const bool drop_eps = g.fault(Fault::ConvBnFoldEps);
  if (drop_eps) g.arm_fault(Fault::ConvBnFoldEps);
  REDUCE_ASSIGN(Tensor new_w, Tensor::allocate_uninitialized(DType::Float, w.shape()));
  REDUCE_ASSIGN(Tensor new_b, Tensor::allocate_uninitialized(DType::Float, {channels}));
  const size_t per_channel = static_cast<size_t>(w.elements() / static_cast<uint64_t>(channels));
  auto src = w.data<float>();
  auto dst = new_w.mutable_data<float>();
  auto db = new_b.mutable_data<float>();
  for (size_t c = 0; c < static_cast<size_t>(channels); ++c) {
    const double k = scale[c] / std::sqrt(static_cast<double>(var[c]) + (drop_eps ? 0.0 : eps));
    for (size_t j = 0; j < per_channel; ++j) dst[c * per_channel + j] = static_cast<float>(src[c * per_channel + j] * k);
    db[c] = static_cast<float>((static_cast<double>(bias[c]) - mean[c]) * k + beta[c]);
  }
  Node folded = conv;
  const std::string w_name = g.fresh_name(conv.inputs[1] + "_bn_folded");
  const std::string b_name = g.fresh_name((has_bias ? conv.inputs[2] : conv.inputs[1]) + "_bias_bn_folded");
  g.add_initializer(w_name, std::move(new_w));
  g.add_initializer(b_name, std::move(new_b));
  folded.inputs = {conv.inputs[0], w_name, b_name};
  folded.outputs = {bn.outputs[0]};
  const size_t nodes[] = {conv_index, bn_index};
  g.replace(nodes, std::move(folded), false);
  return 1;
}

}  // namespace

Expected<int> fold_conv_batchnorm(PlanGraph& g) {
  int folded = 0;
  for (size_t i = 0; i < g.node_count(); ++i) {
    const Node& conv = g.node(i);
    if (g.removed(i) || conv.op_type != "Conv" || !conv.domain.empty() || conv.inputs.size() < 2 ||
        conv.outputs.size() != 1)
      continue;
    const Tensor* w = g.constant(conv.inputs[1]);
    if (!w || w->dtype() != DType::Float || w->rank() < 3 || w->shape()[0] <= 0) continue;
    const int64_t channels = w->shape()[0];
    if (conv.inputs.size() > 2 && !conv.inputs[2].empty() && !channel_constant(g, conv.inputs[2], channels)) continue;
    auto bn_index = g.sole_consumer(conv.outputs[0]);
    if (!bn_index) continue;
    const Node& bn = g.node(*bn_index);
    if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.inputs.size() != 5 || bn.inputs[0] != conv.outputs[0])
      continue;
    bool extra_outputs = false;
    for (size_t k = 1; k < bn.outputs.size(); ++k) extra_outputs = extra_outputs || !bn.outputs[k].empty();
    const Attribute* training = bn.attribute("training_mode");
    if (extra_outputs || (training && training->i != 0) || bn.outputs.empty() || bn.outputs[0].empty()) continue;
    bool params = true;
    for (size_t k = 1; k < 5; ++k) params = params && channel_constant(g, bn.inputs[k], channels);
    if (!params) continue;
    REDUCE_ASSIGN(int n, fold_one(g, i, *bn_index));
    folded += n;
  }
  return folded;
}

}  // namespace reduce::opt
