// Which nodes of a Q/DQ model read dequantized values, and leaving some of them in float.
#include "core/quantized_nodes.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace reduce {

namespace {

bool is_qdq(const Node& n) { return is_quantize_node(n) || is_dequantize_node(n); }

}  // namespace

bool has_qdq_nodes(const Graph& graph) {
  return std::any_of(graph.nodes.begin(), graph.nodes.end(), [](const Node& n) { return is_qdq(n); });
}

std::vector<QuantizedNode> quantized_nodes(const Graph& graph) {
  std::unordered_map<std::string_view, size_t> producer;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    for (const auto& o : graph.nodes[i].outputs)
      if (!o.empty()) producer.emplace(o, i);
  const auto is_constant = [&](const std::string& v) {
    if (graph.find_initializer(v)) return true;
    auto it = producer.find(v);
    return it != producer.end() && is_constant_node(graph.nodes[it->second]);
  };
  std::vector<QuantizedNode> out;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    if (is_qdq(n) || is_constant_node(n)) continue;
    QuantizedNode q{i, {}};
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      auto dq = n.inputs[k].empty() ? producer.end() : producer.find(n.inputs[k]);
      if (dq == producer.end() || !is_dequantize_node(graph.nodes[dq->second])) continue;
      const Node& d = graph.nodes[dq->second];
      if (d.inputs.empty() || d.inputs[0].empty()) continue;
      DequantizedInput in;
      in.input = k;
      in.dequantize = dq->second;
      if (is_constant(d.inputs[0])) {
        in.float_value = d.outputs[0];
      } else {
        auto qn = producer.find(d.inputs[0]);
        if (qn == producer.end() || !is_quantize_node(graph.nodes[qn->second])) continue;
        const Node& qnode = graph.nodes[qn->second];
        if (qnode.inputs.empty() || qnode.inputs[0].empty()) continue;
        in.quantize = qn->second;
        in.float_value = qnode.inputs[0];
      }
      q.inputs.push_back(std::move(in));
    }
    if (!q.inputs.empty()) out.push_back(std::move(q));
  }
  return out;
}

namespace {

// Every name the graph reads or declares as an output, with how many readers it has.
std::unordered_map<std::string, size_t> readers(const Graph& g) {
  std::unordered_map<std::string, size_t> count;
  for (const auto& n : g.nodes) {
    for (const auto& v : n.inputs)
      if (!v.empty()) ++count[v];
    for (const auto& v : n.implicit_inputs) ++count[v];
  }
  for (const auto& o : g.outputs) ++count[o.name];
  return count;
}

// A name for a new value that the graph has nowhere yet.
std::string unused_name(const std::unordered_set<std::string>& taken, const std::string& base) {
  std::string name = base;
  for (int k = 1; taken.count(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

// Removes QuantizeLinear/DequantizeLinear nodes nothing reads any more (over and over: a
// DequantizeLinear's removal can orphan its QuantizeLinear), then the initializers only they read.
// Nodes that nothing read in the original (`before`) are left as they were.
void remove_orphaned_qdq(Graph& g, const std::unordered_map<std::string, size_t>& before) {
  std::set<std::string> freed;  // initializers read by removed nodes
  for (bool removed = true; removed;) {
    removed = false;
    auto count = readers(g);
    for (size_t i = g.nodes.size(); i-- > 0;) {
      const Node& n = g.nodes[i];
      if (!is_qdq(n)) continue;
      const bool was_read = std::any_of(n.outputs.begin(), n.outputs.end(), [&](const std::string& o) {
        return !o.empty() && before.count(o);
      });
      const bool read = std::any_of(n.outputs.begin(), n.outputs.end(), [&](const std::string& o) {
        return !o.empty() && count.count(o);
      });
      if (read || !was_read) continue;
      for (const auto& v : n.inputs)
        if (!v.empty() && g.find_initializer(v)) freed.insert(v);
      std::unordered_set<std::string> gone(n.outputs.begin(), n.outputs.end());
      std::erase_if(g.value_info, [&](const ValueInfo& vi) { return gone.count(vi.name) > 0; });
      g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
      removed = true;
    }
  }
  const auto count = readers(g);
  std::unordered_set<std::string> inputs;
  for (const auto& in : g.inputs) inputs.insert(in.name);
  std::erase_if(g.initializers, [&](const Initializer& init) {
    return freed.count(init.name) && !count.count(init.name) && !inputs.count(init.name);
  });
}

}  // namespace

Expected<Model> leave_in_float(const Model& model, const std::vector<QuantizedNode>& quantized,
                               const std::vector<size_t>& float_nodes,
                               const std::map<std::string, Tensor, std::less<>>& float_weights) {
  std::unordered_map<size_t, const QuantizedNode*> by_node;
  for (const auto& q : quantized) by_node.emplace(q.node, &q);
  Model out = model;
  Graph& g = out.graph;
  std::unordered_set<std::string> taken;
  for (const auto& n : g.nodes) {
    taken.insert(n.inputs.begin(), n.inputs.end());
    taken.insert(n.outputs.begin(), n.outputs.end());
  }
  for (const auto& init : g.initializers) taken.insert(init.name);
  for (const auto& v : g.inputs) taken.insert(v.name);
  std::map<std::string, std::string> weight_names;  // DequantizeLinear output -> its float initializer
  for (size_t node : float_nodes) {
    auto it = by_node.find(node);
    if (it == by_node.end() || node >= g.nodes.size())
      return make_error("node " + std::to_string(node) + " reads no quantized value");
    for (const DequantizedInput& in : it->second->inputs) {
      std::string& read = g.nodes[node].inputs[in.input];
      if (!in.weight()) {
        read = in.float_value;
        continue;
      }
      auto named = weight_names.find(in.float_value);
      if (named == weight_names.end()) {
        auto w = float_weights.find(in.float_value);
        if (w == float_weights.end())
          return make_error("node '" + g.nodes[node].name + "': no float value for the weight '" + in.float_value + "'");
        const std::string name = unused_name(taken, in.float_value + "_float");
        taken.insert(name);
        g.initializers.push_back({name, w->second, {}, std::nullopt});
        named = weight_names.emplace(in.float_value, name).first;
      }
      read = named->second;
    }
  }
  remove_orphaned_qdq(g, readers(model.graph));
  return out;
}

}  // namespace reduce
