// Pass constant-folding: nodes whose inputs are all constants are evaluated once, by the reference
// kernels, and their needed outputs become initializers.
#include <unordered_set>

#include "core/graph_index.h"
#include "plan_graph.h"

namespace reduce::opt {

namespace {

// Ops whose value must not be computed once for all runs.
bool is_nondeterministic(const Node& n) {
  static const std::unordered_set<std::string> random = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                                         "RandomUniformLike", "Bernoulli", "Multinomial"};
  return random.count(n.op_type) > 0;
}

bool foldable(const PlanGraph& g, const Node& n, const std::unordered_set<std::string>& folded_values) {
  if (!(n.domain.empty() || n.domain == "ai.onnx") || n.has_subgraphs() || is_nondeterministic(n)) return false;
  if (n.inputs.empty() && n.op_type != "Constant") return false;
  for (const auto& v : n.inputs)
    if (!v.empty() && !g.constant(v) && !folded_values.count(v)) return false;
  return true;
}

}  // namespace

Expected<int> fold_constants(PlanGraph& g) {
  REDUCE_ASSIGN(GraphIndex index, GraphIndex::build(g.graph(), outer_scope_names(g.graph())));
  std::vector<size_t> folded;
  std::unordered_set<std::string> folded_values;
  for (size_t i : index.topological_order()) {
    const Node& n = g.node(i);
    if (!foldable(g, n, folded_values)) continue;
    folded.push_back(i);
    for (const auto& o : n.outputs)
      if (!o.empty()) folded_values.insert(o);
  }
  if (folded.empty()) return 0;
  // The folded values something else still reads (or that are requested) become initializers.
  const std::unordered_set<size_t> folded_set(folded.begin(), folded.end());
  std::vector<std::string> needed;
  for (size_t i : folded)
    for (const auto& o : g.node(i).outputs) {
      if (o.empty()) continue;
      bool read_outside = g.is_output(o);
      for (size_t c : index.consumers(o)) read_outside = read_outside || !folded_set.count(c);
      if (read_outside) needed.push_back(o);
    }
  Model constants;
  constants.ir_version = g.model().ir_version;
  constants.opset_imports = g.model().opset_imports;
  for (size_t i : folded) constants.graph.nodes.push_back(g.node(i));
  std::unordered_set<std::string> read;
  for (size_t i : folded)
    for (const auto& v : g.node(i).inputs)
      if (!v.empty() && !folded_values.count(v) && read.insert(v).second)
        constants.graph.initializers.push_back(Initializer{v, *g.constant(v), {}});
  for (const auto& o : needed) constants.graph.outputs.push_back(ValueInfo{o, {}, {}});
  std::vector<Tensor> values;
  if (!needed.empty()) {
    auto prepared = make_reference_engine(1)->prepare(constants);
    if (!prepared) return 0;  // left to fail (or not) at run time, as the reference engine would
    auto out = (*prepared)->run({});
    if (!out) return 0;
    for (const auto& o : needed) values.push_back(out->at(o));
  }
  for (size_t i : folded) g.remove(i);
  for (size_t k = 0; k < needed.size(); ++k) g.add_initializer(needed[k], std::move(values[k]));
  return static_cast<int>(folded.size());
}

}  // namespace reduce::opt
