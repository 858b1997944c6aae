// Export of the IR back to onnx::ModelProto; weights inline or placed by a WeightPlacement.
#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "core/narrow_types.h"
#include "onnx_convert.h"

namespace reduce::detail {

void set_external_location(onnx::TensorProto& proto, const std::string& location, uint64_t offset,
                           uint64_t length) {
  proto.clear_raw_data();
  proto.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    auto* kv = proto.add_external_data();
    kv->set_key(key);
    kv->set_value(value);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", std::to_string(length));
}

void tensor_header_to_proto(const Tensor& tensor, onnx::TensorProto& proto) {
  proto.set_data_type(static_cast<int32_t>(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto.add_dims(d);
}

void tensor_to_proto(const Tensor& tensor, onnx::TensorProto& proto) {
  tensor_header_to_proto(tensor, proto);
  if (dtype_is_packed(tensor.dtype())) {
    *proto.mutable_raw_data() = packed_bytes(tensor);
    return;
  }
  const auto bytes = tensor.bytes();
  // Assigned in place: set_raw_data(pointer, size) builds a temporary string first, a second whole
  // copy of the tensor (saved models stream their main-graph weights instead: StreamedModel).
  proto.mutable_raw_data()->assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

void value_type_to_proto(const ValueType& type, onnx::TypeProto& proto) {
  if (type.kind == ValueType::Kind::Other) {
    proto.ParseFromString(type.opaque);
    return;
  }
  if (type.kind != ValueType::Kind::Tensor) return;
  auto* tt = proto.mutable_tensor_type();
  tt->set_elem_type(type.elem_type);
  if (!type.has_shape) return;
  auto* shape = tt->mutable_shape();
  for (const auto& d : type.dims) {
    auto* dim = shape->add_dim();
    if (d.is_static()) dim->set_dim_value(d.value);
    else if (!d.param.empty()) dim->set_dim_param(d.param);
  }
}

namespace {

void value_info_to_proto(const ValueInfo& vi, onnx::ValueInfoProto& proto) {
  proto.set_name(vi.name);
  if (!vi.doc_string.empty()) proto.set_doc_string(vi.doc_string);
  if (vi.type.kind != ValueType::Kind::Unknown) value_type_to_proto(vi.type, *proto.mutable_type());
}

void graph_to_proto(const Graph& g, onnx::GraphProto& proto, WeightPlacement* placement);

void attribute_to_proto(const Attribute& a, onnx::AttributeProto& proto) {
  if (!a.opaque.empty()) {
    proto.ParseFromString(a.opaque);
    return;
  }
  proto.set_name(a.name);
  if (!a.ref_attr_name.empty()) proto.set_ref_attr_name(a.ref_attr_name);
  if (!a.doc_string.empty()) proto.set_doc_string(a.doc_string);
  proto.set_type(static_cast<onnx::AttributeProto::AttributeType>(a.kind));
  switch (a.kind) {
    case Attribute::Kind::Float: proto.set_f(a.f); break;
    case Attribute::Kind::Int: proto.set_i(a.i); break;
    case Attribute::Kind::String: proto.set_s(a.s); break;
    case Attribute::Kind::Floats: proto.mutable_floats()->Add(a.floats.begin(), a.floats.end()); break;
    case Attribute::Kind::Ints: proto.mutable_ints()->Add(a.ints.begin(), a.ints.end()); break;
    case Attribute::Kind::Strings:
      for (const auto& s : a.strings) proto.add_strings(s);
      break;
    case Attribute::Kind::Tensor: tensor_to_proto(a.t, *proto.mutable_t()); break;
    case Attribute::Kind::Tensors:
      for (const auto& t : a.tensors) tensor_to_proto(t, *proto.add_tensors());
      break;
    // Subgraph weights stay inline: they are small and engines resolve them relative to nothing.
    case Attribute::Kind::Graph: graph_to_proto(*a.g, *proto.mutable_g(), nullptr); break;
    case Attribute::Kind::Graphs:
      for (const auto& g : a.graphs) graph_to_proto(*g, *proto.add_graphs(), nullptr);
      break;
    default: break;
  }
}

// A value the file had as a Constant node goes back as one, inline, where the file had it (constant_places).
void constant_node_to_proto(const Initializer& init, onnx::NodeProto& np) {
  np.set_name(*init.constant_node);
  np.set_op_type("Constant");
  if (!init.doc_string.empty()) np.set_doc_string(init.doc_string);
  np.add_output(init.name);
  auto* a = np.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  tensor_to_proto(init.tensor, *a->mutable_t());
}

// Where each Constant node goes (Initializer::constant_before): before the node that followed it in
// the file, else before its first reader here, else at the end; those of one place in file order.
std::vector<std::vector<const Initializer*>> constant_places(const Graph& g) {
  std::vector<std::vector<const Initializer*>> before(g.nodes.size() + 1);
  std::unordered_map<std::string_view, size_t> by_name, first_reader;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    by_name.emplace(g.nodes[i].name, i);
    for (const auto& in : g.nodes[i].inputs) first_reader.emplace(in, i);
    for (const auto& in : g.nodes[i].implicit_inputs) first_reader.emplace(in, i);
  }
  for (const auto& init : g.initializers) {
    if (!init.constant_node) continue;
    size_t place = g.nodes.size();
    if (auto it = by_name.find(init.constant_before); !init.constant_before.empty() && it != by_name.end()) place = it->second;
    if (auto it = first_reader.find(init.name); it != first_reader.end()) place = std::min(place, it->second);
    before[place].push_back(&init);
  }
  return before;
}

void graph_to_proto(const Graph& g, onnx::GraphProto& proto, WeightPlacement* placement) {
  proto.set_name(g.name);
  if (!g.doc_string.empty()) proto.set_doc_string(g.doc_string);
  const auto constants = constant_places(g);
  for (size_t i = 0; i <= g.nodes.size(); ++i) {
    for (const Initializer* init : constants[i]) constant_node_to_proto(*init, *proto.add_node());
    if (i == g.nodes.size()) break;
    const Node& n = g.nodes[i];
    auto* np = proto.add_node();
    np->set_name(n.name);
    np->set_op_type(n.op_type);
    if (!n.domain.empty()) np->set_domain(n.domain);
    if (!n.doc_string.empty()) np->set_doc_string(n.doc_string);
    for (const auto& in : n.inputs) np->add_input(in);
    for (const auto& o : n.outputs) np->add_output(o);
    for (const auto& a : n.attributes) attribute_to_proto(a, *np->add_attribute());
  }
  for (const auto& init : g.initializers) {
    if (init.constant_node) continue;
    auto* tp = proto.add_initializer();
    tp->set_name(init.name);
    if (!init.doc_string.empty()) tp->set_doc_string(init.doc_string);
    if (placement && (placement->place_external(init.tensor, *tp) || placement->stream_inline(init.tensor, *tp))) {
      tensor_header_to_proto(init.tensor, *tp);
    } else {
      tensor_to_proto(init.tensor, *tp);
    }
  }
  for (const auto& vi : g.inputs) value_info_to_proto(vi, *proto.add_input());
  for (const auto& vi : g.outputs) value_info_to_proto(vi, *proto.add_output());
  for (const auto& vi : g.value_info) value_info_to_proto(vi, *proto.add_value_info());
}

}  // namespace

onnx::ModelProto model_to_proto(const Model& m, WeightPlacement* placement) {
  onnx::ModelProto proto;
  proto.set_ir_version(m.ir_version);
  for (const auto& op : m.opset_imports) {
    auto* o = proto.add_opset_import();
    o->set_domain(op.domain);
    o->set_version(op.version);
  }
  if (!m.producer_name.empty()) proto.set_producer_name(m.producer_name);
  if (!m.producer_version.empty()) proto.set_producer_version(m.producer_version);
  if (!m.domain.empty()) proto.set_domain(m.domain);
  if (m.model_version) proto.set_model_version(m.model_version);
  if (!m.doc_string.empty()) proto.set_doc_string(m.doc_string);
  for (const auto& [k, v] : m.metadata_props) {
    auto* kv = proto.add_metadata_props();
    kv->set_key(k);
    kv->set_value(v);
  }
  for (const auto& f : m.functions) proto.add_functions()->ParseFromString(f);
  graph_to_proto(m.graph, *proto.mutable_graph(), placement);
  return proto;
}

}  // namespace reduce::detail
