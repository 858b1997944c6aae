// Pass attention-fusion: MatMul, optional Mul/Div by a scalar constant, Softmax over the last axis,
// MatMul (float) become one attention kernel: softmax(scale(A x B)) x V. A standard Attention node
// (opset 23+, float) becomes the fused StandardAttention kernel, as engines map the op to theirs.
#include <algorithm>

#include "plan_graph.h"

namespace reduce::opt {

namespace {

// Whether a Softmax normalizes over the last axis of its input (opset < 13 coerces to 2-D at axis,
// which is the same only when axis is the last one).
bool softmax_on_last_axis(const PlanGraph& g, const Node& softmax) {
  const int64_t opset = g.model().opset("").value_or(0);
  const Attribute* a = softmax.attribute("axis");
  const int64_t axis = a ? a->i : (opset >= 13 ? -1 : 1);
  if (axis == -1) return true;
  const auto rank = g.rank(softmax.inputs[0]);
  return rank && axis == static_cast<int64_t>(*rank) - 1;
}

bool is_matmul(const Node& n) { return n.op_type == "MatMul" && n.domain.empty() && n.inputs.size() == 2; }

// A standard Attention node the fused kernel covers: Q float or of a type ONNX could not infer (its
// inference predates the op, so values computed from an Attention output are untyped; the kernel
// checks at run time), no requested QK output (the fused kernel keeps its scores inside, as
// engines' fused kernels do; such nodes stay on the reference op).
bool is_fusable_attention_op(const PlanGraph& g, const Node& n) {
  if (n.op_type != "Attention" || !n.domain.empty() || g.model().opset("").value_or(0) < 23) return false;
  if (n.inputs.size() < 3 || (n.outputs.size() > 3 && !n.outputs[3].empty())) return false;
  return !g.type(n.inputs[0]) || g.is_float(n.inputs[0]);
}

int fuse_attention_ops(PlanGraph& g) {
  int fused = 0;
  for (size_t i = 0; i < g.node_count(); ++i) {
    if (g.removed(i) || !is_fusable_attention_op(g, g.node(i))) continue;
    const Node& op = g.node(i);
    Node attention;
    attention.name = g.fresh_name((op.name.empty() ? op.outputs[0] : op.name) + "_attention");
    attention.op_type = "StandardAttention";
    attention.domain = kFusedDomain;
    attention.inputs = op.inputs;
    attention.outputs.assign(op.outputs.begin(), op.outputs.begin() + std::min<size_t>(op.outputs.size(), 3));
    if (g.fault(Fault::AttentionUnstableSoftmax)) g.arm_fault(Fault::AttentionUnstableSoftmax);
    g.replace(std::vector<size_t>{i}, std::move(attention));
    ++fused;
  }
  return fused;
}

}  // namespace

Expected<int> fuse_attention(PlanGraph& g) {
  int fused = fuse_attention_ops(g);
  for (size_t i = 0; i < g.node_count(); ++i) {
    if (g.removed(i)) continue;
    const Node& softmax = g.node(i);
    if (softmax.op_type != "Softmax" || !softmax.domain.empty() || softmax.inputs.size() != 1) continue;
    if (!g.is_float(softmax.inputs[0]) || !softmax_on_last_axis(g, softmax)) continue;
    std::vector<size_t> nodes = {i};
    int64_t scale_op = 0;  // 0: none, 1: multiply, 2: divide
    std::string scale;
    auto before = g.producer(softmax.inputs[0]);
    if (!before || !g.internal_to(softmax.inputs[0], std::vector<size_t>{i})) continue;
    const Node* scores = &g.node(*before);
    if (scores->op_type == "Mul" || scores->op_type == "Div") {
      if (!scores->domain.empty() || scores->inputs.size() != 2) continue;
      const size_t scale_index = *before;
      const bool divide = scores->op_type == "Div";
      const int side = divide ? 1 : (g.constant(scores->inputs[1]) ? 1 : 0);
      const Tensor* c = g.constant(scores->inputs[side]);
      if (!c || c->dtype() != DType::Float || c->elements() != 1) continue;
      scale = scores->inputs[side];
      scale_op = divide ? 2 : 1;
      auto mm = g.producer(scores->inputs[1 - side]);
      if (!mm || !g.internal_to(scores->inputs[1 - side], std::vector<size_t>{scale_index})) continue;
      nodes.push_back(scale_index);
      before = mm;
      scores = &g.node(*mm);
    }
    if (!is_matmul(*scores)) continue;
    nodes.push_back(*before);
    auto out = g.sole_consumer(softmax.outputs[0]);
    if (!out || !is_matmul(g.node(*out)) || g.node(*out).inputs[0] != softmax.outputs[0] ||
        g.node(*out).inputs[1] == softmax.outputs[0])
      continue;
    nodes.push_back(*out);
    Node attention;
    attention.name = g.fresh_name((scores->name.empty() ? softmax.outputs[0] : scores->name) + "_attention");
    attention.op_type = "Attention";
    attention.domain = kFusedDomain;
    attention.inputs = {scores->inputs[0], scores->inputs[1], g.node(*out).inputs[1], scale};
    attention.outputs = {g.node(*out).outputs[0]};
    attention.attributes = {int_attribute("scale_op", scale_op)};
    if (g.fault(Fault::AttentionUnstableSoftmax)) g.arm_fault(Fault::AttentionUnstableSoftmax);
    g.replace(nodes, std::move(attention));
    ++fused;
  }
  return fused;
}

}  // namespace reduce::opt
