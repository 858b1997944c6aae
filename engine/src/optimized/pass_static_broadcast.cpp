// Pass static-broadcast: float Add/Sub/Mul/Div whose operand shapes are static and whose output has
// batch (dim 0) 1 run on a kernel specialized for those shapes (fused op StaticBroadcast); other
// shapes, including batch >= 2, keep the generic broadcast kernel.
#include <algorithm>

#include "plan_graph.h"
#include "static_broadcast.h"

namespace reduce::opt {

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t x = d + a.size() >= rank ? a[d + a.size() - rank] : 1;
    const int64_t y = d + b.size() >= rank ? b[d + b.size() - rank] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[d] = x == 1 ? y : x;
  }
  return out;
}

bool broadcast_batch1_triggers(const Shape& a, const Shape& b, int which) {
  if (a.size() != 4 || b.size() != 4) return false;
  auto out = broadcast_shapes(a, b);
  const Shape& operand = which == 0 ? a : b;
  return out && (*out)[0] == 1 && operand[1] == 1 && (*out)[1] > 1;
}

namespace {

constexpr size_t kMaxSpecializedRank = 6;

Attribute ints_attribute(std::string name, const Shape& values) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Ints;
  a.ints = values;
  return a;
}

}  // namespace

Expected<int> specialize_broadcast(PlanGraph& g) {
  int specialized = 0;
  for (size_t i = 0; i < g.node_count(); ++i) {
    const Node& n = g.node(i);
    if (g.removed(i) || !n.domain.empty() || n.inputs.size() != 2 || n.outputs.size() != 1) continue;
    if (n.op_type != "Add" && n.op_type != "Sub" && n.op_type != "Mul" && n.op_type != "Div") continue;
    if (!g.is_float(n.inputs[0]) || !g.is_float(n.inputs[1])) continue;
    const auto a = g.static_shape(n.inputs[0]), b = g.static_shape(n.inputs[1]);
    if (!a || !b) continue;
    const auto out = broadcast_shapes(*a, *b);
    if (!out || out->empty() || out->size() > kMaxSpecializedRank || (*out)[0] != 1) continue;
    Node s;
    s.name = g.fresh_name((n.name.empty() ? n.outputs[0] : n.name) + "_static");
    s.op_type = "StaticBroadcast";
    s.domain = kFusedDomain;
    s.inputs = n.inputs;
    s.outputs = n.outputs;
    s.attributes = {ints_attribute("a_shape", *a), ints_attribute("b_shape", *b)};
    if (g.fault(Fault::BroadcastBatch1) && (broadcast_batch1_triggers(*a, *b, 0) || broadcast_batch1_triggers(*a, *b, 1)))
      g.arm_fault(Fault::BroadcastBatch1);
    const size_t nodes[] = {i};
    g.replace(nodes, std::move(s));
    ++specialized;
  }
  return specialized;
}

}  // namespace reduce::opt
