// Queries on the model IR that need no index: attribute lookup, scopes, counts, type printing.
#include "core/model.h"

#include <algorithm>
#include <string>
#include <unordered_map>
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

NodeRenaming make_node_names_unique(Model& model, bool name_unnamed) {
  std::unordered_set<std::string> taken;
  for (const Node& n : model.graph.nodes) taken.insert(n.name);
  NodeRenaming out;
  std::unordered_set<std::string> seen;  // names of the nodes so far, in order
  std::unordered_map<std::string, size_t> next;  // the next suffix to try per base name
  auto fresh = [&](const std::string& base) {
    std::string name;
    do name = base + "_" + std::to_string(next[base]++);
    while (!taken.insert(name).second);
    return name;
  };
  for (Node& n : model.graph.nodes) {
    if (n.name.empty()) {
      if (!name_unnamed) continue;
      n.name = fresh("node");
      ++out.unnamed;
    } else if (!seen.insert(n.name).second) {
      n.name = fresh(n.name);
      ++out.duplicates;
    }
    seen.insert(n.name);
  }
  return out;
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

namespace {
bool is_quantization_op(const Node& node, std::string_view op) {
  return node.op_type == op && (node.domain.empty() || node.domain == "ai.onnx" || node.domain == "com.microsoft");
}
}  // namespace

bool is_quantize_node(const Node& node) { return is_quantization_op(node, "QuantizeLinear"); }
bool is_dequantize_node(const Node& node) { return is_quantization_op(node, "DequantizeLinear"); }

bool is_constant_node(std::string_view op_type, std::string_view domain) {
  return op_type == "Constant" && (domain.empty() || domain == "ai.onnx");
}

size_t count_nodes(const Graph& graph) {
  return static_cast<size_t>(
      std::count_if(graph.nodes.begin(), graph.nodes.end(), [](const Node& n) { return !is_constant_node(n); }));
}

}  // namespace reduce

namespace reduce {

Status set_input_shape(Model& model, std::string_view input, const Shape& shape) {
  for (auto& vi : model.graph.inputs) {
    if (vi.name != input) continue;
    if (!vi.type.is_tensor()) return make_error("input '" + vi.name + "' is not a tensor");
    if (vi.type.has_shape && vi.type.dims.size() != shape.size())
      return make_error("input '" + vi.name + "' has rank " + std::to_string(vi.type.dims.size()) + ", not " +
                        std::to_string(shape.size()) + " as in " + shape_to_string(shape));
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] < 0) return make_error("negative dimension in " + shape_to_string(shape));
      if (vi.type.has_shape && vi.type.dims[i].is_static() && vi.type.dims[i].value != shape[i])
        return make_error("input '" + vi.name + "' has static shape " + vi.type.to_string() + ", which " +
                          shape_to_string(shape) + " contradicts");
    }
    vi.type.has_shape = true;
    vi.type.dims.clear();
    for (int64_t d : shape) vi.type.dims.push_back(Dim::fixed(d));
    // Types recorded for the dynamic shape may now be wrong (a dim was symbolic): infer afresh.
    model.graph.value_info.clear();
    return {};
  }
  return make_error("the model has no input named '" + std::string(input) + "'");
}

}  // namespace reduce
