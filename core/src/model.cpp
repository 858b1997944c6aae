// Queries on the model IR that need no index: attribute lookup, scopes, counts, type printing.
#include "core/model.h"

#include <algorithm>
#include <unordered_set>

namespace reduce {

ValueType ValueType::tensor(DType dtype, const Shape& shape) {
  ValueType t;
  t.kind = Kind::Tensor;
  t.elem_type = static_cast<int32_t>(dtype);
  t.has_shape = true;
  for (int64_t d : shape) t.dims.push_back(Dim::fixed(d));
  return t;
}

std::string ValueType::to_string() const {
  if (kind == Kind::Unknown) return "?";
  if (kind == Kind::Other) return "non-tensor";
  const auto dtype = dtype_from_onnx(elem_type);
  std::string s = dtype ? std::string(dtype_name(*dtype))
                        : (elem_type == 8 ? std::string("string") : "type" + std::to_string(elem_type));
  if (!has_shape) return s + "[?]";
  s += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    if (dims[i].is_static()) s += std::to_string(dims[i].value);
    else if (!dims[i].param.empty()) s += dims[i].param;
    else s += "?";
  }
  return s + "]";
}

const Attribute* Node::attribute(std::string_view attr_name) const {
  for (const auto& a : attributes)
    if (a.name == attr_name) return &a;
  return nullptr;
}

bool Node::has_subgraphs() const {
  return std::any_of(attributes.begin(), attributes.end(),
                     [](const Attribute& a) { return a.g != nullptr || !a.graphs.empty(); });
}

const Initializer* Graph::find_initializer(std::string_view value_name) const {
  for (const auto& i : initializers)
    if (i.name == value_name) return &i;
  return nullptr;
}

const ValueInfo* Graph::find_value_info(std::string_view value_name) const {
  for (const auto* list : {&inputs, &outputs, &value_info})
    for (const auto& vi : *list)
      if (vi.name == value_name) return &vi;
  return nullptr;
}

std::optional<int64_t> Model::opset(std::string_view domain) const {
  const bool default_domain = domain.empty() || domain == "ai.onnx";
  for (const auto& op : opset_imports) {
    const bool d = op.domain.empty() || op.domain == "ai.onnx";
    if (default_domain ? d : op.domain == domain) return op.version;
  }
  return std::nullopt;
}

std::vector<std::string> outer_scope_names(const Graph& graph) {
  std::unordered_set<std::string> defined;
  for (const auto& vi : graph.inputs) defined.insert(vi.name);
  for (const auto& init : graph.initializers) defined.insert(init.name);
  for (const auto& n : graph.nodes)
    for (const auto& o : n.outputs) defined.insert(o);
  std::vector<std::string> outer;
  std::unordered_set<std::string> seen;
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second) outer.push_back(name);
  };
  for (const auto& n : graph.nodes) {
    for (const auto& i : n.inputs) use(i);
    for (const auto& i : n.implicit_inputs) use(i);
  }
  for (const auto& o : graph.outputs) use(o.name);
  return outer;
}

size_t count_nodes(const Graph& graph) {
  return static_cast<size_t>(std::count_if(graph.nodes.begin(), graph.nodes.end(), [](const Node& n) {
    return !(n.op_type == "Constant" && (n.domain.empty() || n.domain == "ai.onnx"));
  }));
}

}  // namespace reduce
