// Deep comparison of two models, reporting the first difference (round-trip tests, bundles).

#include "core/model.h"

namespace reduce {

namespace {

using Diff = std::optional<std::string>;

Diff graph_difference(const Graph& a, const Graph& b, const std::string& where);


Diff tensor_difference(const Tensor& a, const Tensor& b, const std::string& where) {
  if (a.dtype() != b.dtype()) return where + ": element type " + std::string(dtype_name(a.dtype())) + " vs " + std::string(dtype_name(b.dtype()));
  if (a.shape() != b.shape()) return where + ": shape " + shape_to_string(a.shape()) + " vs " + shape_to_string(b.shape());
  if (!a.equals(b)) return where + ": values differ";
  return std::nullopt;
}

Diff attribute_difference(const Attribute& a, const Attribute& b, const std::string& where) {
  const std::string w = where + " attribute '" + a.name + "'";
  if (a.name != b.name) return where + ": attribute '" + a.name + "' vs '" + b.name + "'";
  if (a.kind != b.kind) return w + ": kind differs";
  if (a.f != b.f || a.i != b.i || a.s != b.s || a.floats != b.floats || a.ints != b.ints || a.strings != b.strings ||
      a.ref_attr_name != b.ref_attr_name || a.opaque != b.opaque)
    return w + ": value differs";
  if (a.kind == Attribute::Kind::Tensor)
    if (auto d = tensor_difference(a.t, b.t, w)) return d;
  if (a.tensors.size() != b.tensors.size() || a.graphs.size() != b.graphs.size()) return w + ": length differs";
  for (size_t i = 0; i < a.tensors.size(); ++i)
    if (auto d = tensor_difference(a.tensors[i], b.tensors[i], w)) return d;
  if ((a.g == nullptr) != (b.g == nullptr)) return w + ": graph presence differs";
  if (a.g)
    if (auto d = graph_difference(*a.g, *b.g, w)) return d;
  for (size_t i = 0; i < a.graphs.size(); ++i)
    if (auto d = graph_difference(*a.graphs[i], *b.graphs[i], w)) return d;
  return std::nullopt;
}

Diff value_infos_difference(const std::vector<ValueInfo>& a, const std::vector<ValueInfo>& b, const std::string& where) {
  if (a.size() != b.size()) return where + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " entries";
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i]))
      return where + ": '" + a[i].name + "' " + a[i].type.to_string() + " vs '" + b[i].name + "' " + b[i].type.to_string();
  return std::nullopt;
}

Diff graph_difference(const Graph& a, const Graph& b, const std::string& where) {
  const std::string w = where.empty() ? "graph" : where + " graph";
  if (a.name != b.name) return w + ": name differs";
  if (a.nodes.size() != b.nodes.size())
    return w + ": " + std::to_string(a.nodes.size()) + " vs " + std::to_string(b.nodes.size()) + " nodes";
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const Node& x = a.nodes[i];
    const Node& y = b.nodes[i];
    const std::string nw = w + " node " + std::to_string(i) + " '" + x.name + "' (" + x.op_type + ")";
    if (x.name != y.name || x.op_type != y.op_type || x.domain != y.domain) return nw + ": identity differs";
    if (x.inputs != y.inputs) return nw + ": inputs differ";
    if (x.outputs != y.outputs) return nw + ": outputs differ";
    if (x.implicit_inputs != y.implicit_inputs) return nw + ": implicit inputs differ";
    if (x.attributes.size() != y.attributes.size()) return nw + ": attribute count differs";
    for (size_t k = 0; k < x.attributes.size(); ++k)
      if (auto d = attribute_difference(x.attributes[k], y.attributes[k], nw)) return d;
  }
  if (auto d = value_infos_difference(a.inputs, b.inputs, w + " inputs")) return d;
  if (auto d = value_infos_difference(a.outputs, b.outputs, w + " outputs")) return d;
  if (auto d = value_infos_difference(a.value_info, b.value_info, w + " value_info")) return d;
  if (a.initializers.size() != b.initializers.size())
    return w + ": " + std::to_string(a.initializers.size()) + " vs " + std::to_string(b.initializers.size()) + " initializers";
  for (size_t i = 0; i < a.initializers.size(); ++i) {
    if (a.initializers[i].name != b.initializers[i].name)
      return w + ": initializer '" + a.initializers[i].name + "' vs '" + b.initializers[i].name + "'";
    if (auto d = tensor_difference(a.initializers[i].tensor, b.initializers[i].tensor, w + " initializer '" + a.initializers[i].name + "'"))
      return d;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> first_difference(const Model& a, const Model& b) {
  if (a.ir_version != b.ir_version) return "ir_version differs";
  if (a.opset_imports != b.opset_imports) return "opset imports differ";
  if (a.functions != b.functions) return "model-local functions differ";
  return graph_difference(a.graph, b.graph, "");
}

}  // namespace reduce
