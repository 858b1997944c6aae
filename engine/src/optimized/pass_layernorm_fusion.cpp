// Pass layernorm-fusion: ReduceMean, Sub, Pow(2), ReduceMean, Add eps, Sqrt, Div, optionally Mul gamma
// and Add beta (constants), over trailing axes of a float tensor, become one LayerNorm kernel. A
// standard RMSNormalization node (float) runs as the same kernel, uncentered, as engines map it to
// their normalization kernel.
#include <algorithm>

#include "plan_graph.h"

namespace reduce::opt {

namespace {

// The axes a keepdims ReduceMean reduces (attribute, or constant input since opset 18), or nullopt.
std::optional<std::vector<int64_t>> reduce_mean_axes(const PlanGraph& g, const Node& n) {
  if (n.op_type != "ReduceMean" || !n.domain.empty() || n.outputs.size() != 1) return std::nullopt;
  if (const Attribute* k = n.attribute("keepdims"); k && k->i != 1) return std::nullopt;
  std::vector<int64_t> axes;
  if (const Attribute* a = n.attribute("axes")) axes = a->ints;
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    const Tensor* t = g.constant(n.inputs[1]);
    if (!t || t->dtype() != DType::Int64) return std::nullopt;
    auto v = t->data<int64_t>();
    axes.assign(v.begin(), v.end());
  }
  if (axes.empty()) return std::nullopt;
  return axes;
}

// How many trailing axes `axes` names (e.g. [-1] -> 1, [2, 3] of rank 4 -> 2), or 0 if not trailing.
size_t trailing_axes(std::vector<int64_t> axes, std::optional<size_t> rank) {
  for (auto& a : axes) {
    if (a >= 0) {
      if (!rank) return 0;
      a -= static_cast<int64_t>(*rank);
    }
  }
  std::sort(axes.begin(), axes.end());
  const int64_t k = static_cast<int64_t>(axes.size());
  for (int64_t j = 0; j < k; ++j)
    if (axes[j] != j - k) return 0;
  if (rank && static_cast<size_t>(k) > *rank) return 0;
  return static_cast<size_t>(k);
}

// The single live consumer of `value` with this op type, or nullopt.
std::optional<size_t> consumer_of_type(const PlanGraph& g, const std::string& value, std::string_view op) {
  auto c = g.sole_consumer(value);
  if (!c || g.node(*c).op_type != op || !g.node(*c).domain.empty()) return std::nullopt;
  return c;
}

// The other input of a binary node reading `value` ("" when the node is not binary).
std::string other_input(const Node& n, const std::string& value) {
  if (n.inputs.size() != 2) return "";
  return n.inputs[0] == value ? n.inputs[1] : n.inputs[0];
}

// gamma/beta must broadcast within the normalized (last `k`) axes only.
bool fits_normalized_axes(const Tensor& t, size_t k) {
  size_t rank = t.rank();
  for (size_t d = 0; d < t.rank() && t.shape()[d] == 1 && rank > k; ++d) --rank;
  return rank <= k;
}

// RMSNormalization(X, scale) normalizes X's axes from `axis` on: the trailing axis count, when known.
std::optional<size_t> rms_trailing_axes(const PlanGraph& g, const Node& n) {
  const Attribute* a = n.attribute("axis");
  const int64_t axis = a ? a->i : -1;
  if (axis < 0) return static_cast<size_t>(-axis);
  const auto rank = g.rank(n.inputs[0]);
  if (!rank || axis >= static_cast<int64_t>(*rank)) return std::nullopt;
  return *rank - static_cast<size_t>(axis);
}

int fuse_rms_normalization(PlanGraph& g) {
  int fused = 0;
  for (size_t i = 0; i < g.node_count(); ++i) {
    if (g.removed(i)) continue;
    const Node& rms = g.node(i);
    if (rms.op_type != "RMSNormalization" || !rms.domain.empty() || rms.inputs.size() != 2 || rms.outputs.size() != 1)
      continue;
    // Another stash_type stays on the reference op, which checks it (the kernel accumulates in double).
    const Attribute* stash = rms.attribute("stash_type");
    if (!g.is_float(rms.inputs[0]) || rms.inputs[1].empty() || (stash && stash->i != 1)) continue;
    const auto k = rms_trailing_axes(g, rms);
    if (!k) continue;
    const Attribute* eps = rms.attribute("epsilon");
    Node ln;
    ln.name = g.fresh_name((rms.name.empty() ? rms.outputs[0] : rms.name) + "_layernorm");
    ln.op_type = "LayerNorm";
    ln.domain = kFusedDomain;
    ln.inputs = {rms.inputs[0], rms.inputs[1], ""};
    ln.outputs = rms.outputs;
    Attribute epsilon;
    epsilon.name = "epsilon";
    epsilon.kind = Attribute::Kind::Float;
    epsilon.f = eps ? eps->f : 1e-5f;
    ln.attributes = {epsilon, int_attribute("axes", static_cast<int64_t>(*k)), int_attribute("centered", 0)};
    if (g.fault(Fault::LayerNormDropEps)) g.arm_fault(Fault::LayerNormDropEps);
    g.replace(std::vector<size_t>{i}, std::move(ln));
    ++fused;
  }
  return fused;
}

}  // namespace

Expected<int> fuse_layernorm(PlanGraph& g) {
  int fused = fuse_rms_normalization(g);
  for (size_t i = 0; i < g.node_count(); ++i) {
    if (g.removed(i)) continue;
    const Node& mean1 = g.node(i);
    auto axes1 = reduce_mean_axes(g, mean1);
    if (!axes1 || mean1.inputs.empty() || !g.is_float(mean1.inputs[0])) continue;
    const std::string x = mean1.inputs[0];
    const size_t k = trailing_axes(*axes1, g.rank(x));
    if (k == 0) continue;
    auto sub = consumer_of_type(g, mean1.outputs[0], "Sub");
    if (!sub || g.node(*sub).inputs != std::vector<std::string>{x, mean1.outputs[0]}) continue;
    const std::string& d = g.node(*sub).outputs[0];
    // d feeds exactly the Pow and the Div.
    std::optional<size_t> pow, div;
    const auto readers = g.consumers(d);
    if (readers.size() != 2) continue;
    for (size_t c : readers) {
      const Node& n = g.node(c);
      if (n.op_type == "Pow" && n.domain.empty() && n.inputs.size() == 2 && n.inputs[0] == d) pow = c;
      if (n.op_type == "Div" && n.domain.empty() && n.inputs.size() == 2 && n.inputs[0] == d) div = c;
    }
    if (!pow || !div) continue;
    const Tensor* two = g.constant(g.node(*pow).inputs[1]);
    if (!two || !is_scalar_value(*two, 2.0)) continue;
    auto mean2 = g.sole_consumer(g.node(*pow).outputs[0]);
    if (!mean2) continue;
    auto axes2 = reduce_mean_axes(g, g.node(*mean2));
    if (!axes2 || trailing_axes(*axes2, g.rank(x)) != k || g.node(*mean2).inputs[0] != g.node(*pow).outputs[0]) continue;
    auto add_eps = consumer_of_type(g, g.node(*mean2).outputs[0], "Add");
    if (!add_eps) continue;
    const Tensor* eps = g.constant(other_input(g.node(*add_eps), g.node(*mean2).outputs[0]));
    if (!eps || eps->dtype() != DType::Float || eps->elements() != 1) continue;
    auto sqrt = consumer_of_type(g, g.node(*add_eps).outputs[0], "Sqrt");
    if (!sqrt || consumer_of_type(g, g.node(*sqrt).outputs[0], "Div") != div || g.node(*div).inputs[1] != g.node(*sqrt).outputs[0])
      continue;
    std::vector<size_t> nodes = {i, *sub, *pow, *mean2, *add_eps, *sqrt, *div};
    if (!g.internal_to(d, nodes)) continue;
    // Optional affine tail: Mul by constant gamma, then Add constant beta.
    std::string out = g.node(*div).outputs[0], gamma, beta;
    if (auto mul = consumer_of_type(g, out, "Mul")) {
      const std::string c = other_input(g.node(*mul), out);
      if (const Tensor* t = g.constant(c); t && t->dtype() == DType::Float && fits_normalized_axes(*t, k)) {
        gamma = c;
        nodes.push_back(*mul);
        out = g.node(*mul).outputs[0];
      }
    }
    if (auto add = consumer_of_type(g, out, "Add")) {
      const std::string c = other_input(g.node(*add), out);
      if (const Tensor* t = g.constant(c); t && t->dtype() == DType::Float && fits_normalized_axes(*t, k)) {
        beta = c;
        nodes.push_back(*add);
        out = g.node(*add).outputs[0];
      }
    }
    Node ln;
    ln.name = g.fresh_name((mean1.name.empty() ? x : mean1.name) + "_layernorm");
    ln.op_type = "LayerNorm";
    ln.domain = kFusedDomain;
    ln.inputs = {x, gamma, beta};
    ln.outputs = {out};
    Attribute epsilon;
    epsilon.name = "epsilon";
    epsilon.kind = Attribute::Kind::Float;
    epsilon.f = eps->data<float>()[0];
    Attribute axes;
    axes.name = "axes";
    axes.kind = Attribute::Kind::Int;
    axes.i = static_cast<int64_t>(k);
    ln.attributes = {epsilon, axes};
    if (g.fault(Fault::LayerNormDropEps)) g.arm_fault(Fault::LayerNormDropEps);
    g.replace(nodes, std::move(ln));
    ++fused;
  }
  return fused;
}

}  // namespace reduce::opt
