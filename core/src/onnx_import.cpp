// Import of onnx::ModelProto into the IR: tensors (inline, typed fields, external), types, graphs.
#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "core/narrow_types.h"
#include "core/validate.h"
#include "onnx_convert.h"
#include "subgraph_names.h"

namespace reduce::detail {

namespace fs = std::filesystem;

namespace {

// Copies a repeated typed field into a tensor, narrowing each element to `Stored`.
template <typename Stored, typename Field>
Expected<Tensor> tensor_from_field(DType dtype, Shape shape, const Field& field, size_t per_element = 1) {
  REDUCE_ASSIGN(uint64_t n, element_count(shape));
  if (static_cast<uint64_t>(field.size()) != n * per_element)
    return make_error("tensor of shape " + shape_to_string(shape) + " has " +
                      std::to_string(field.size() / per_element) + " values");
  REDUCE_ASSIGN(Tensor t, Tensor::allocate(dtype, std::move(shape)));
  auto out = t.mutable_data<Stored>();
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<Stored>(field.Get(i));
  return t;
}

// Resolves an external-data location against the model's folder, refusing paths that leave it.
Expected<fs::path> confined_path(const fs::path& base_dir, const std::string& location) {
  const fs::path loc(location);
  if (location.empty()) return make_error("external data has an empty location");
  if (base_dir.empty()) return make_error("external data is not allowed here (no model folder to resolve it against)");
  if (loc.is_absolute()) return make_error("external data location '" + location + "' is an absolute path");
  for (const auto& part : loc.lexically_normal())
    if (part == "..") return make_error("external data location '" + location + "' escapes the model's folder");
  std::error_code ec;
  const fs::path base = fs::canonical(base_dir, ec);
  if (ec) return make_error("cannot resolve the model's folder: " + ec.message());
  const fs::path full = fs::weakly_canonical(base / loc, ec);
  if (ec) return make_error("cannot resolve external data location '" + location + "': " + ec.message());
  // A symlink inside the folder may still point outside it.
  const auto rel = full.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..")
    return make_error("external data location '" + location + "' escapes the model's folder");
  if (!fs::exists(full, ec)) return make_error("external data file '" + location + "' does not exist");
  return full;
}

Expected<Tensor> external_tensor(const onnx::TensorProto& proto, DType dtype, Shape shape, ImportContext& ctx) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto& kv : proto.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = std::stoull(kv.value());
      else if (kv.key() == "length") length = std::stoull(kv.value());
    } catch (const std::exception&) {
      return make_error("external data field '" + kv.key() + "' is not a number: '" + kv.value() + "'");
    }
  }
  REDUCE_ASSIGN(fs::path path, confined_path(ctx.base_dir, location));
  auto it = ctx.mapped.find(path);
  if (it == ctx.mapped.end()) {
    REDUCE_ASSIGN(auto file, MappedFile::open(path));
    it = ctx.mapped.emplace(path, std::move(file)).first;
  }
  const auto& file = it->second;
  REDUCE_ASSIGN(uint64_t n, element_count(shape));
  if (n > (uint64_t{1} << 62) / dtype_size(dtype)) return make_error("tensor shape " + shape_to_string(shape) + " is too large");
  const uint64_t size = dtype_packed_bytes(dtype, n);
  if (length && *length != size)
    return make_error("external data length " + std::to_string(*length) + " does not match shape " +
                      shape_to_string(shape) + " (" + std::to_string(size) + " bytes)");
  const uint64_t file_size = file->bytes().size();
  if (offset > file_size || size > file_size - offset)
    return make_error("external data of " + std::to_string(size) + " bytes at offset " + std::to_string(offset) +
                      " runs past the end of '" + location + "' (" + std::to_string(file_size) + " bytes)");
  // Packed types are unpacked into memory of their own (one byte per element), the others viewed.
  if (dtype_is_packed(dtype)) return tensor_from_packed(dtype, std::move(shape), file->bytes().subspan(offset, size));
  return Tensor::view(dtype, std::move(shape), file, file->bytes().data() + offset, size);
}

// int32_data of a packed type holds one packed byte per value (two 4-bit or four 2-bit elements).
Expected<Tensor> packed_tensor_from_int32_data(DType dtype, Shape shape, const google::protobuf::RepeatedField<int32_t>& field) {
  std::string packed(static_cast<size_t>(field.size()), '\0');
  for (int i = 0; i < field.size(); ++i) {
    if (field.Get(i) < 0 || field.Get(i) > 255)
      return make_error("int32_data value " + std::to_string(field.Get(i)) + " is not a packed byte");
    packed[static_cast<size_t>(i)] = static_cast<char>(field.Get(i));
  }
  return tensor_from_packed(dtype, std::move(shape), std::as_bytes(std::span<const char>(packed.data(), packed.size())));
}

}  // namespace

Expected<Tensor> tensor_from_proto(onnx::TensorProto& proto, ImportContext& ctx) {
  const std::string subject = proto.name().empty() ? std::string("tensor") : "tensor '" + proto.name() + "'";
  auto fail = [&](const Error& e) { return Error{{}, subject + ": " + e.what}; };
  if (proto.data_type() == onnx::TensorProto::STRING) return fail(make_error("string tensors are not supported"));
  const auto dtype = dtype_from_onnx(proto.data_type());
  if (!dtype) return fail(make_error("unknown element type " + std::to_string(proto.data_type())));
  if (proto.has_segment()) return fail(make_error("segmented tensors are not supported"));
  Shape shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape)
    if (d < 0) return fail(make_error("negative dimension in " + shape_to_string(shape)));

  auto result = [&]() -> Expected<Tensor> {
    if (proto.data_location() == onnx::TensorProto::EXTERNAL) return external_tensor(proto, *dtype, shape, ctx);
    if (proto.has_raw_data()) {
      // Take the protobuf's string instead of copying the bytes.
      if (dtype_is_packed(*dtype))
        return tensor_from_packed(*dtype, shape, std::as_bytes(std::span<const char>(proto.raw_data().data(), proto.raw_data().size())));
      std::shared_ptr<std::string> raw(proto.release_raw_data());
      const auto* data = reinterpret_cast<const std::byte*>(raw->data());
      const size_t size = raw->size();
      return Tensor::view(*dtype, shape, std::move(raw), data, size);
    }
    switch (*dtype) {
      case DType::Float: return tensor_from_field<float>(*dtype, shape, proto.float_data());
      case DType::Complex64: return tensor_from_field<float>(*dtype, shape, proto.float_data(), 2);
      case DType::Double: return tensor_from_field<double>(*dtype, shape, proto.double_data());
      case DType::Complex128: return tensor_from_field<double>(*dtype, shape, proto.double_data(), 2);
      case DType::Int64: return tensor_from_field<int64_t>(*dtype, shape, proto.int64_data());
      case DType::UInt32: return tensor_from_field<uint32_t>(*dtype, shape, proto.uint64_data());
      case DType::UInt64: return tensor_from_field<uint64_t>(*dtype, shape, proto.uint64_data());
      case DType::Int32: return tensor_from_field<int32_t>(*dtype, shape, proto.int32_data());
      case DType::Int16: return tensor_from_field<int16_t>(*dtype, shape, proto.int32_data());
      case DType::UInt16:
      case DType::Float16:
      case DType::BFloat16: return tensor_from_field<uint16_t>(*dtype, shape, proto.int32_data());
      case DType::Int8: return tensor_from_field<int8_t>(*dtype, shape, proto.int32_data());
      case DType::UInt8:
      case DType::Bool:
      case DType::Float8E4M3FN:
      case DType::Float8E4M3FNUZ:
      case DType::Float8E5M2:
      case DType::Float8E5M2FNUZ:
      case DType::Float8E8M0: return tensor_from_field<uint8_t>(*dtype, shape, proto.int32_data());
      case DType::UInt4:
      case DType::Int4:
      case DType::Float4E2M1:
      case DType::UInt2:
      case DType::Int2: return packed_tensor_from_int32_data(*dtype, shape, proto.int32_data());
      default: return make_error("unsupported element type");
    }
  }();
  if (!result) return fail(result.error());
  return result;
}

ValueType value_type_from_proto(const onnx::TypeProto& proto) {
  ValueType t;
  if (proto.has_tensor_type()) {
    t.kind = ValueType::Kind::Tensor;
    t.elem_type = proto.tensor_type().elem_type();
    if (proto.tensor_type().has_shape()) {
      t.has_shape = true;
      for (const auto& d : proto.tensor_type().shape().dim()) {
        if (d.has_dim_value()) t.dims.push_back(Dim::fixed(d.dim_value()));
        else if (d.has_dim_param()) t.dims.push_back(Dim::symbolic(d.dim_param()));
        else t.dims.push_back(Dim{});
      }
    }
  } else if (proto.value_case() != onnx::TypeProto::VALUE_NOT_SET) {
    t.kind = ValueType::Kind::Other;
    t.opaque = proto.SerializeAsString();
  }
  return t;
}

namespace {

ValueInfo value_info_from_proto(const onnx::ValueInfoProto& proto) {
  return ValueInfo{proto.name(), value_type_from_proto(proto.type()), proto.doc_string()};
}

Expected<Graph> graph_from_proto(onnx::GraphProto& proto, ImportContext& ctx);

Expected<Attribute> attribute_from_proto(onnx::AttributeProto& proto, ImportContext& ctx) {
  Attribute a;
  a.name = proto.name();
  a.ref_attr_name = proto.ref_attr_name();
  a.doc_string = proto.doc_string();
  a.kind = static_cast<Attribute::Kind>(proto.type());
  switch (proto.type()) {
    case onnx::AttributeProto::FLOAT: a.f = proto.f(); break;
    case onnx::AttributeProto::INT: a.i = proto.i(); break;
    case onnx::AttributeProto::STRING: a.s = proto.s(); break;
    case onnx::AttributeProto::FLOATS: a.floats.assign(proto.floats().begin(), proto.floats().end()); break;
    case onnx::AttributeProto::INTS: a.ints.assign(proto.ints().begin(), proto.ints().end()); break;
    case onnx::AttributeProto::STRINGS: a.strings.assign(proto.strings().begin(), proto.strings().end()); break;
    case onnx::AttributeProto::TENSOR: {
      REDUCE_ASSIGN(a.t, tensor_from_proto(*proto.mutable_t(), ctx));
      break;
    }
    case onnx::AttributeProto::TENSORS:
      for (auto& t : *proto.mutable_tensors()) {
        REDUCE_ASSIGN(Tensor tensor, tensor_from_proto(t, ctx));
        a.tensors.push_back(std::move(tensor));
      }
      break;
    case onnx::AttributeProto::GRAPH: {
      REDUCE_ASSIGN(Graph g, graph_from_proto(*proto.mutable_g(), ctx));
      a.g = std::make_shared<const Graph>(std::move(g));
      break;
    }
    case onnx::AttributeProto::GRAPHS:
      for (auto& g : *proto.mutable_graphs()) {
        REDUCE_ASSIGN(Graph graph, graph_from_proto(g, ctx));
        a.graphs.push_back(std::make_shared<const Graph>(std::move(graph)));
      }
      break;
    case onnx::AttributeProto::UNDEFINED:
      if (a.ref_attr_name.empty()) return make_error("attribute '" + a.name + "' has no type");
      break;
    default:  // sparse tensors and type protos: carried, not interpreted
      a.opaque = proto.SerializeAsString();
      break;
  }
  return a;
}

// Turns a Constant node into the tensor it produces, or nullopt when it must stay a node.
Expected<std::optional<Tensor>> constant_value(onnx::NodeProto& node, ImportContext& ctx) {
  if (node.attribute_size() != 1 || node.output_size() != 1) return std::optional<Tensor>{};
  auto& attr = *node.mutable_attribute(0);
  const std::string& n = attr.name();
  if (n == "value") {
    REDUCE_ASSIGN(Tensor t, tensor_from_proto(*attr.mutable_t(), ctx));
    return std::optional<Tensor>(std::move(t));
  }
  Expected<Tensor> t = make_error("");
  if (n == "value_float") t = Tensor::from_vector(DType::Float, {}, std::vector<float>{attr.f()});
  else if (n == "value_floats")
    t = Tensor::from_vector(DType::Float, {attr.floats_size()}, std::vector<float>(attr.floats().begin(), attr.floats().end()));
  else if (n == "value_int") t = Tensor::from_vector(DType::Int64, {}, std::vector<int64_t>{attr.i()});
  else if (n == "value_ints")
    t = Tensor::from_vector(DType::Int64, {attr.ints_size()}, std::vector<int64_t>(attr.ints().begin(), attr.ints().end()));
  else if (n == "value_string" || n == "value_strings") return make_error("string constants are not supported");
  else return std::optional<Tensor>{};  // sparse_value: keep the node
  if (!t) return t.error();
  return std::optional<Tensor>(std::move(t).value());
}

Expected<Graph> graph_from_proto(onnx::GraphProto& proto, ImportContext& ctx) {
  Graph g;
  g.name = proto.name();
  g.doc_string = proto.doc_string();
  if (proto.sparse_initializer_size() > 0)
    return make_error("graph '" + g.name + "': sparse initializers are not supported");
  for (const auto& vi : proto.input()) g.inputs.push_back(value_info_from_proto(vi));
  for (const auto& vi : proto.output()) g.outputs.push_back(value_info_from_proto(vi));
  for (const auto& vi : proto.value_info()) g.value_info.push_back(value_info_from_proto(vi));
  for (auto& init : *proto.mutable_initializer()) {
    REDUCE_ASSIGN(Tensor t, tensor_from_proto(init, ctx));
    g.initializers.push_back(Initializer{init.name(), std::move(t), init.doc_string(), std::nullopt});
  }
  g.nodes.reserve(proto.node_size());
  size_t constants_placed = g.initializers.size();  // constants before here await the next node's name
  for (auto& np : *proto.mutable_node()) {
    const std::string where = "node '" + np.name() + "' (" + np.op_type() + ")";
    if (is_constant_node(np.op_type(), np.domain())) {
      auto value = constant_value(np, ctx);
      if (!value) return Error{{}, where + ": " + value.error().what};
      if (value->has_value()) {
        g.initializers.push_back(Initializer{np.output(0), std::move(**value), np.doc_string(), np.name()});
        continue;
      }
    }
    for (; constants_placed < g.initializers.size(); ++constants_placed)
      g.initializers[constants_placed].constant_before = np.name();
    Node n;
    n.name = np.name();
    n.op_type = np.op_type();
    n.domain = np.domain();
    n.doc_string = np.doc_string();
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    for (auto& ap : *np.mutable_attribute()) {
      auto attr = attribute_from_proto(ap, ctx);
      if (!attr) return Error{{}, where + ": " + attr.error().what};
      n.attributes.push_back(std::move(*attr));
    }
    if (n.has_subgraphs()) n.implicit_inputs = detail::implicit_inputs_of(n);
    g.nodes.push_back(std::move(n));
  }
  return g;
}

// The deepest subgraph under `graph` (at `depth`), stopping once past kMaxSubgraphDepth.
int subgraph_depth(const onnx::GraphProto& graph, int depth) {
  int deepest = depth;
  for (const auto& node : graph.node())
    for (const auto& attr : node.attribute()) {
      if (deepest > kMaxSubgraphDepth) return deepest;
      if (attr.has_g()) deepest = std::max(deepest, subgraph_depth(attr.g(), depth + 1));
      for (const auto& g : attr.graphs()) deepest = std::max(deepest, subgraph_depth(g, depth + 1));
    }
  return deepest;
}

}  // namespace

Expected<Model> model_from_proto(onnx::ModelProto& proto, ImportContext& ctx) {
  Model m;
  m.ir_version = proto.ir_version();
  for (const auto& op : proto.opset_import()) m.opset_imports.push_back(OpsetImport{op.domain(), op.version()});
  m.producer_name = proto.producer_name();
  m.producer_version = proto.producer_version();
  m.domain = proto.domain();
  m.model_version = proto.model_version();
  m.doc_string = proto.doc_string();
  for (const auto& kv : proto.metadata_props()) m.metadata_props.emplace_back(kv.key(), kv.value());
  for (const auto& f : proto.functions()) m.functions.push_back(f.SerializeAsString());
  if (!proto.has_graph()) return make_error("the model has no graph");
  // Import, validation and every later pass recurse into subgraphs: their depth is bounded first.
  if (subgraph_depth(proto.graph(), 0) > kMaxSubgraphDepth)
    return make_error("subgraphs are nested more than " + std::to_string(kMaxSubgraphDepth) + " deep");
  REDUCE_ASSIGN(m.graph, graph_from_proto(*proto.mutable_graph(), ctx));
  const fs::path base = ctx.base_dir.empty() ? fs::path(".") : ctx.base_dir;
  std::error_code ec;
  const fs::path canonical_base = fs::canonical(base, ec);
  for (const auto& [path, file] : ctx.mapped) {
    m.external_data_files.push_back(path.lexically_relative(canonical_base).string());
    m.external_data.push_back(file);
  }
  return m;
}

namespace {

// Protobuf's own nesting limit (100 messages) stops at about 32 subgraph levels; each level is
// three messages (Graph, Node, Attribute), and value types nest too.
constexpr int kProtoRecursionLimit = 3 * (kMaxSubgraphDepth + 2) + 100;

// The messages on the way from a model to its subgraphs, as the wire-format scan sees them.
enum class Wire { Model, Function, Graph, Node, Attribute };

bool read_varint(const uint8_t*& p, const uint8_t* end, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    const uint8_t b = *p++;
    value |= uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// Calls `on_field(field, begin, end)` for each length-delimited field of the serialized message
// [p, end), skipping the others, while it returns true. Malformed bytes end the walk (protobuf
// reports them when it parses).
template <typename OnField>
void for_each_bytes_field(const uint8_t* p, const uint8_t* end, OnField on_field) {
  while (p < end) {
    uint64_t key = 0, value = 0;
    if (!read_varint(p, end, key)) return;
    switch (key & 7) {
      case 0: if (!read_varint(p, end, value)) return; continue;
      case 1:
      case 5: {
        const ptrdiff_t size = (key & 7) == 1 ? 8 : 4;
        if (end - p < size) return;
        p += size;
        continue;
      }
      case 2: break;
      default: return;  // groups: not in ONNX
    }
    if (!read_varint(p, end, value) || value > static_cast<uint64_t>(end - p)) return;
    const uint8_t* sub = p;
    p += value;
    if (!on_field(key >> 3, sub, p)) return;
  }
}

// The deepest subgraph nesting in the serialized message [p, end) of kind `kind`, whose graphs
// are at `depth`; stops as soon as it exceeds kMaxSubgraphDepth. Only fields that lead to
// subgraphs are entered.
int subgraph_depth(const uint8_t* p, const uint8_t* end, Wire kind, int depth) {
  int deepest = kind == Wire::Graph ? depth : 0;
  for_each_bytes_field(p, end, [&](uint64_t field, const uint8_t* sub, const uint8_t* sub_end) {
    std::optional<std::pair<Wire, int>> next;
    if (kind == Wire::Model && field == 7) next = {Wire::Graph, 0};
    else if (kind == Wire::Model && field == 25) next = {Wire::Function, 0};
    else if ((kind == Wire::Graph && field == 1) || (kind == Wire::Function && field == 7)) next = {Wire::Node, depth};
    else if (kind == Wire::Node && field == 5) next = {Wire::Attribute, depth};
    else if (kind == Wire::Attribute && (field == 6 || field == 11)) next = {Wire::Graph, depth + 1};
    if (next) deepest = std::max(deepest, subgraph_depth(sub, sub_end, next->first, next->second));
    return deepest <= kMaxSubgraphDepth;
  });
  return deepest;
}

// The `location` of every external-data entry in the serialized message [p, end) of kind `kind`:
// tensors of the graph (initializers), of attributes, at any subgraph depth (bounded). Only the
// fields that lead to tensors are entered.
enum class DataWire { Model, Graph, Node, Attribute, Tensor, Entry };
void external_locations(const uint8_t* p, const uint8_t* end, DataWire kind, int depth, std::vector<std::string>& out) {
  if (depth > kMaxSubgraphDepth) return;
  std::string key_text, value_text;
  for_each_bytes_field(p, end, [&](uint64_t field, const uint8_t* sub, const uint8_t* sub_end) {
    if (kind == DataWire::Entry) {
      if (field == 1) key_text.assign(reinterpret_cast<const char*>(sub), sub_end - sub);
      if (field == 2) value_text.assign(reinterpret_cast<const char*>(sub), sub_end - sub);
      return true;
    }
    std::optional<std::pair<DataWire, int>> next;
    if (kind == DataWire::Model && field == 7) next = {DataWire::Graph, depth};
    else if (kind == DataWire::Graph && field == 5) next = {DataWire::Tensor, depth};
    else if (kind == DataWire::Graph && field == 1) next = {DataWire::Node, depth};
    else if (kind == DataWire::Node && field == 5) next = {DataWire::Attribute, depth};
    else if (kind == DataWire::Attribute && (field == 5 || field == 10)) next = {DataWire::Tensor, depth};
    else if (kind == DataWire::Attribute && (field == 6 || field == 11)) next = {DataWire::Graph, depth + 1};
    else if (kind == DataWire::Tensor && field == 13) next = {DataWire::Entry, depth};
    if (next) external_locations(sub, sub_end, next->first, next->second, out);
    return true;
  });
  if (kind == DataWire::Entry && key_text == "location" && !value_text.empty()) out.push_back(value_text);
}

Status parse_bytes(std::span<const std::byte> bytes, google::protobuf::MessageLite& message,
                   const std::string& where, const std::string& what) {
  if (bytes.empty()) return Error{where, "the file is empty"};
  // Protobuf cannot parse messages of 2 GB or more.
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    return Error{where, "the file is larger than 2 GB, too large for " + what};
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  in.SetRecursionLimit(kProtoRecursionLimit);
  if (!message.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    return Error{where, "not " + what + " (protobuf parsing failed; truncated or another kind of file?)"};
  return {};
}

}  // namespace

Status parse_proto_file(const fs::path& path, google::protobuf::MessageLite& message, const std::string& what) {
  REDUCE_ASSIGN(auto file, MappedFile::open(path));
  return parse_bytes(file->bytes(), message, path.string(), what);
}

std::vector<std::string> external_data_locations(std::span<const std::byte> model) {
  std::vector<std::string> out;
  const auto* begin = reinterpret_cast<const uint8_t*>(model.data());
  external_locations(begin, begin + model.size(), DataWire::Model, 0, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Status parse_model_file(const fs::path& path, onnx::ModelProto& model, std::shared_ptr<const MappedFile>* mapped) {
  const std::string where = path.string();
  REDUCE_ASSIGN(auto file, MappedFile::open(path));
  if (mapped) *mapped = file;
  const auto bytes = file->bytes();
  const auto* begin = reinterpret_cast<const uint8_t*>(bytes.data());
  if (subgraph_depth(begin, begin + bytes.size(), Wire::Model, 0) > kMaxSubgraphDepth)
    return Error{where, "subgraphs are nested more than " + std::to_string(kMaxSubgraphDepth) + " deep"};
  return parse_bytes(bytes, model, where, "an ONNX model (weights of 2 GB or more must be in external data)");
}

}  // namespace reduce::detail
