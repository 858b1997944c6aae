// Pass matmul-add-gemm: MatMul(A, B) + C with B a constant float matrix [K, N] and C a constant bias
// of N values becomes one Gemm over A flattened to [M, K] (fused op MatMulAddGemm).
#include "plan_graph.h"

namespace reduce::opt {

Expected<int> fuse_matmul_add(PlanGraph& g) {
  int fused = 0;
  for (size_t i = 0; i < g.node_count(); ++i) {
    const Node& mm = g.node(i);
    if (g.removed(i) || mm.op_type != "MatMul" || !mm.domain.empty() || mm.inputs.size() != 2 || mm.outputs.size() != 1)
      continue;
    const Tensor* b = g.constant(mm.inputs[1]);
    if (!b || b->dtype() != DType::Float || b->rank() != 2) continue;
    const int64_t n = b->shape()[1];
    auto add_index = g.sole_consumer(mm.outputs[0]);
    if (!add_index) continue;
    const Node& add = g.node(*add_index);
    if (add.op_type != "Add" || !add.domain.empty() || add.inputs.size() != 2) continue;
    const std::string& bias = add.inputs[0] == mm.outputs[0] ? add.inputs[1] : add.inputs[0];
    const Tensor* c = g.constant(bias);
    if (!c || c->dtype() != DType::Float || static_cast<int64_t>(c->elements()) != n || c->shape().back() != n) continue;
    // A bias [1, N] must not raise the rank of the result (it would for a 1-D A).
    const auto a_rank = g.rank(mm.inputs[0]);
    if (c->rank() > 2 || (c->rank() == 2 && !(a_rank && *a_rank >= 2))) continue;
    Node gemm;
    gemm.name = g.fresh_name(mm.name.empty() ? add.outputs[0] + "_gemm" : mm.name + "_gemm");
    gemm.op_type = "MatMulAddGemm";
    gemm.domain = kFusedDomain;
    gemm.inputs = {mm.inputs[0], mm.inputs[1], bias};
    gemm.outputs = {add.outputs[0]};
    const size_t nodes[] = {i, *add_index};
    g.replace(nodes, std::move(gemm));
    ++fused;
  }
  return fused;
}

}  // namespace reduce::opt
