// Pass activation-fusion: an elementwise activation that alone consumes the output of a Conv,
// ConvTranspose, Gemm, MatMul, BatchNormalization or Add/Sub/Mul/Div is applied in that node's
// kernel, on its output buffer (fused op FusedActivation; parts: producer, activation). With the
// hardsigmoid-default-alpha fault a fused HardSigmoid loses its alpha and beta (the kernel's side).
#include <unordered_set>

#include "plan_graph.h"

namespace reduce::opt {

namespace {

bool is_producer(const Node& n) {
  static const std::unordered_set<std::string> ops = {"Conv", "ConvTranspose", "Gemm", "MatMul", "BatchNormalization",
                                                      "Add", "Sub", "Mul", "Div"};
  return n.domain.empty() && ops.count(n.op_type) && n.outputs.size() == 1;
}

// Activations the fused kernel applies in place; Clip only with constant (or attribute) bounds.
bool is_activation(const PlanGraph& g, const Node& n) {
  static const std::unordered_set<std::string> ops = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid",
                                                      "HardSwish", "Clip"};
  if (!n.domain.empty() || !ops.count(n.op_type) || n.inputs.empty() || n.outputs.size() != 1) return false;
  for (size_t k = 1; k < n.inputs.size(); ++k)
    if (!n.inputs[k].empty() && !g.constant(n.inputs[k])) return false;
  return true;
}

// A HardSigmoid whose alpha or beta is not ONNX's default (PyTorch writes alpha 1/6): where
// hardsigmoid-default-alpha changes values.
bool has_own_parameters(const Node& n) {
  const Attribute* alpha = n.attribute("alpha");
  const Attribute* beta = n.attribute("beta");
  return (alpha && alpha->f != 0.2f) || (beta && beta->f != 0.5f);
}

}  // namespace

Expected<int> fuse_activation(PlanGraph& g) {
  int fused = 0;
  for (size_t i = 0; i < g.node_count(); ++i) {
    if (g.removed(i) || !is_producer(g.node(i))) continue;
    const Node& producer = g.node(i);
    auto act = g.sole_consumer(producer.outputs[0]);
    if (!act || !is_activation(g, g.node(*act)) || g.node(*act).inputs[0] != producer.outputs[0]) continue;
    const Node& activation = g.node(*act);
    bool read_twice = false;
    for (size_t k = 1; k < activation.inputs.size(); ++k) read_twice = read_twice || activation.inputs[k] == producer.outputs[0];
    if (read_twice) continue;
    Node f;
    f.name = g.fresh_name((producer.name.empty() ? producer.outputs[0] : producer.name) + "_" + activation.op_type);
    f.op_type = "FusedActivation";
    f.domain = kFusedDomain;
    // Inputs: the producer's, then the activation's extra (constant) inputs.
    f.inputs = producer.inputs;
    for (size_t k = 1; k < activation.inputs.size(); ++k) f.inputs.push_back(activation.inputs[k]);
    f.outputs = activation.outputs;
    if (activation.op_type == "HardSigmoid" && g.fault(Fault::HardSigmoidDefaultAlpha) && has_own_parameters(activation))
      g.arm_fault(Fault::HardSigmoidDefaultAlpha);
    const size_t nodes[] = {i, *act};
    g.replace(nodes, std::move(f));
    ++fused;
  }
  return fused;
}

}  // namespace reduce::opt
