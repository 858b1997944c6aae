// The one-node model that tells a failure of the model from a failure of the engine's setup.
#include <mutex>

#include "oracle/oracle.h"

namespace reduce {

// Named like the original (its first input, first output, first node), so that an engine message
// quoting names masks to the same signature as the original's.
Expected<CandidateRun> Oracle::one_node_model() const {
  const Model& original = *model_;
  const Graph& g = original.graph;
  CandidateRun run;
  run.model.ir_version = original.ir_version;
  run.model.opset_imports = original.opset_imports;
  run.model.producer_name = "reduce (one-node model)";
  Graph& probe = run.model.graph;
  probe.name = g.name;
  Node node;
  node.name = g.nodes.empty() || g.nodes.front().name.empty() ? "one_node" : g.nodes.front().name;
  std::string output = g.outputs.empty() ? "output" : g.outputs.front().name;
  if (!g.inputs.empty() && !inputs_.empty()) {
    const ValueInfo& input = g.inputs.front();
    if (output == input.name) output += "_identity";
    node.op_type = "Identity";
    node.inputs = {input.name};
    probe.inputs = {input};
    probe.outputs = {ValueInfo{output, input.type, {}}};
    run.inputs = {inputs_.front()};
    run.expected = {NamedTensor{output, inputs_.front().tensor}};
  } else {
    REDUCE_ASSIGN(Tensor zero, Tensor::from_vector<float>(DType::Float, Shape{}, {0.0f}));
    node.op_type = "Constant";
    Attribute value;
    value.name = "value";
    value.kind = Attribute::Kind::Tensor;
    value.t = zero;
    node.attributes.push_back(std::move(value));
    probe.outputs = {ValueInfo{output, ValueType::tensor(DType::Float, Shape{}), {}}};
    run.expected = {NamedTensor{output, zero}};
  }
  node.outputs = {output};
  probe.nodes.push_back(std::move(node));
  return run;
}

Verdict Oracle::evaluate_one_node_model(const std::atomic<bool>* cancel) {
  auto run = one_node_model();
  if (!run) return Verdict::invalid_because(run.error().message());
  const RunOnce run_once = [&](TensorMap* into, uint64_t limit) { return run_materialized(*run, cancel, into, limit); };
  Verdict v = majority_of_runs(run_once, cancel, nullptr, 0);
  count_evaluation(v, cancel);
  return v;
}

}  // namespace reduce
