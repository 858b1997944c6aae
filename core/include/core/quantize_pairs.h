// Q/DQ pairs of a graph, which the subgraphs a reduction proposes keep whole: TensorRT's explicit
// quantization refuses a QuantizeLinear that is not followed by its DequantizeLinear.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/graph_index.h"
#include "core/status.h"

namespace reduce {

// A pair is a QuantizeLinear of the graph whose output only DequantizeLinear nodes read (as their
// input x), with those DequantizeLinear nodes. A QuantizeLinear that is already lone in the graph
// (its output a graph output, or read by another node or a subgraph body) heads no pair: a subgraph
// keeping it alone shows what the whole graph shows. A DequantizeLinear without its QuantizeLinear
// (reading the quantized value as a cut input) is fine.
class QuantizePairs {
 public:
  explicit QuantizePairs(const GraphIndex& index);

  bool empty() const { return heads_.empty(); }
  // The DequantizeLinear nodes of the pair `node` heads, ascending; empty when it heads none.
  std::span<const size_t> dequantizers(size_t node) const { return dequantizers_[node]; }
  // The QuantizeLinear of the pair whose DequantizeLinear `node` is.
  std::optional<size_t> quantizer(size_t node) const {
    return quantizer_[node] == kNone ? std::nullopt : std::optional<size_t>(quantizer_[node]);
  }

  // The first QuantizeLinear (lowest index) that `kept` (a flag per node) keeps without one of its
  // DequantizeLinear nodes, with that DequantizeLinear; nullopt when every kept pair is whole.
  std::optional<std::pair<size_t, size_t>> first_broken(const std::vector<bool>& kept) const;
  // Ok, or an error naming the QuantizeLinear `nodes` (indices of the graph) keeps without its
  // DequantizeLinear, or whose quantized output `outputs` (a subgraph's explicit outputs) marks:
  // a network output is not a DequantizeLinear either.
  Status check(std::span<const size_t> nodes, std::span<const std::string> outputs = {}) const;

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  const Graph* graph_;
  std::vector<std::vector<size_t>> dequantizers_;  // per node
  std::vector<size_t> quantizer_;                   // per node: its pair's QuantizeLinear, or kNone
  std::vector<size_t> heads_;                       // pair QuantizeLinear nodes, ascending
};

}  // namespace reduce
