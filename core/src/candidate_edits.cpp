// Candidate edits beyond the choice of nodes: weights filled with one value, attributes dropped.
#include <algorithm>
#include <cmath>

#include "core/body_nodes.h"
#include "core/extract.h"
#include "core/half.h"

namespace reduce {

Expected<Tensor> filled_like(const Tensor& like, double value) {
  REDUCE_ASSIGN(Tensor t, Tensor::allocate(like.dtype(), like.shape()));
  // +0 is all zero bits in every float type, and allocate zero-fills: writing the zeros again
  // would make a large weight resident (it is mapped, and only written pages are).
  if (value == 0.0 && !std::signbit(value) && dtype_is_float(like.dtype())) return t;
  switch (like.dtype()) {
    case DType::Float: for (auto& x : t.mutable_data<float>()) x = static_cast<float>(value); break;
    case DType::Double: for (auto& x : t.mutable_data<double>()) x = value; break;
    case DType::Float16: for (auto& x : t.mutable_data<uint16_t>()) x = float_to_half(static_cast<float>(value)); break;
    case DType::BFloat16: for (auto& x : t.mutable_data<uint16_t>()) x = float_to_bfloat16(static_cast<float>(value)); break;
    default: return make_error("cannot fill a tensor of type " + std::string(dtype_name(like.dtype())));
  }
  return t;
}

Status apply_candidate_edits(Model& extracted, const Graph& original, const Candidate& c, const WeightFill& fill) {
  for (const auto& [name, value] : c.filled) {
    auto it = std::find_if(extracted.graph.initializers.begin(), extracted.graph.initializers.end(),
                           [&](const Initializer& init) { return init.name == name; });
    if (it == extracted.graph.initializers.end()) return make_error("no initializer '" + name + "' to fill");
    REDUCE_ASSIGN(it->tensor, fill(name, it->tensor, value));
  }
  for (const auto& [index, attr] : c.dropped_attributes) {
    if (index >= original.nodes.size()) return make_error("no node " + std::to_string(index));
    Node* node = find_extracted_node(extracted, original, index);
    if (!node) return make_error("node " + std::to_string(index) + " is not kept");
    std::erase_if(node->attributes, [&](const Attribute& a) { return a.name == attr; });
  }
  return {};
}

}  // namespace reduce
