// Q/DQ pairs: which QuantizeLinear nodes only feed DequantizeLinear nodes, and subgraphs that break them.
#include "core/quantize_pairs.h"

#include <algorithm>
#include <string_view>

namespace reduce {

QuantizePairs::QuantizePairs(const GraphIndex& index)
    : graph_(&index.graph()), dequantizers_(index.graph().nodes.size()), quantizer_(index.graph().nodes.size(), kNone) {
  const auto& nodes = graph_->nodes;
  for (size_t q = 0; q < nodes.size(); ++q) {
    if (!is_quantize_node(nodes[q]) || nodes[q].outputs.empty() || nodes[q].outputs[0].empty()) continue;
    const std::string& y = nodes[q].outputs[0];
    const auto readers = index.consumers(y);
    if (readers.empty() || index.is_graph_output(y)) continue;
    bool only_dequantizers = true;
    for (size_t r : readers) {
      const Node& reader = nodes[r];
      // Read as x only (consumers() also counts reads from inside subgraph bodies, which are not x).
      size_t reads = 0;
      for (const auto& in : reader.inputs) reads += in == y;
      only_dequantizers &= is_dequantize_node(reader) && !reader.inputs.empty() && reader.inputs[0] == y &&
                           reads == 1 && !reader.has_subgraphs();
    }
    if (!only_dequantizers) continue;
    dequantizers_[q].assign(readers.begin(), readers.end());
    for (size_t dq : readers) quantizer_[dq] = q;
    heads_.push_back(q);
  }
}

std::optional<std::pair<size_t, size_t>> QuantizePairs::first_broken(const std::vector<bool>& kept) const {
  for (size_t q : heads_) {
    if (!kept[q]) continue;
    for (size_t dq : dequantizers_[q])
      if (!kept[dq]) return std::make_pair(q, dq);
  }
  return std::nullopt;
}

Status QuantizePairs::check(std::span<const size_t> nodes, std::span<const std::string> outputs) const {
  if (empty()) return {};
  std::vector<bool> kept(graph_->nodes.size(), false);
  for (size_t n : nodes)
    if (n < kept.size()) kept[n] = true;
  for (size_t q : heads_)
    if (kept[q] && std::find(outputs.begin(), outputs.end(), graph_->nodes[q].outputs[0]) != outputs.end())
      return make_error("the output '" + graph_->nodes[q].outputs[0] + "' of QuantizeLinear '" + graph_->nodes[q].name +
                        "' is marked as an output instead of feeding only its DequantizeLinear nodes");
  const auto broken = first_broken(kept);
  if (!broken) return {};
  const Node& q = graph_->nodes[broken->first];
  const Node& dq = graph_->nodes[broken->second];
  return make_error("QuantizeLinear '" + q.name + "' (output '" + q.outputs[0] + "') is kept without its DequantizeLinear '" +
                    dq.name + "'");
}

}  // namespace reduce
