// Value types for a whole graph from declared value_info plus ONNX shape inference, with a rank
// fallback where ONNX gives up (e.g. Reshape to a computed shape in old opsets).
#include <onnx/shape_inference/implementation.h>

#include "core/extract.h"
#include "core/model_io.h"
#include "core/validate.h"
#include "onnx_convert.h"

namespace reduce {

namespace {

// Shape inference needs the values of small tensors (Reshape targets, Slice bounds) but only
// the type and shape of large ones, so large weights are exported as dangling external data.
class TypeOnlyPlacement : public detail::WeightPlacement {
 public:
  bool place_external(const Tensor& tensor, onnx::TensorProto& proto) override {
    if (tensor.byte_size() < 4096) return false;
    detail::set_external_location(proto, "(not loaded for shape inference)", 0, tensor.byte_size());
    return true;
  }
};

using TypeMap = std::unordered_map<std::string, ValueType>;

const ValueType* find(const TypeMap& types, const std::string& name) {
  auto it = types.find(name);
  return it == types.end() ? nullptr : &it->second;
}

// Attention's Y: Q's shape with the last dim V's head size (3-D: times the query heads per KV head
// count ratio), unknown when V's is.
ValueType attention_output(const Node& node, const ValueType& q, const ValueType* v) {
  ValueType out = q;
  if (out.dims.empty()) return out;
  out.dims.back() = Dim{};
  if (!v || !v->is_tensor() || !v->has_shape || v->dims.size() != q.dims.size() || !v->dims.back().is_static()) return out;
  if (q.dims.size() == 4) {
    out.dims.back() = v->dims.back();
  } else {
    const Attribute* q_heads = node.attribute("q_num_heads");
    const Attribute* kv_heads = node.attribute("kv_num_heads");
    if (q_heads && kv_heads && kv_heads->i > 0 && v->dims.back().value % kv_heads->i == 0)
      out.dims.back() = Dim::fixed(v->dims.back().value / kv_heads->i * q_heads->i);
  }
  return out;
}

// The rank of a node's first output when ONNX could not infer it but the op's definition fixes it:
// Reshape/Expand/ConstantOfShape follow the length of their (1-D) shape input; Tile, Resize and
// Upsample keep their data input's rank; RMSNormalization and Attention (opset 23) give their input's
// type and (Attention: nearly) its shape.
std::optional<ValueType> fallback_type(const Node& node, const TypeMap& types) {
  if (!node.domain.empty() && node.domain != "ai.onnx") return std::nullopt;
  auto input = [&](size_t k) -> const ValueType* {
    return k < node.inputs.size() && !node.inputs[k].empty() ? find(types, node.inputs[k]) : nullptr;
  };
  auto shaped = [](const ValueType* t) { return t && t->is_tensor() && t->has_shape; };
  const ValueType* data = input(0);
  ValueType out;
  out.kind = ValueType::Kind::Tensor;
  size_t rank = 0;
  const std::string& op = node.op_type;
  if (op == "Reshape" || op == "Expand" || op == "ConstantOfShape") {
    const ValueType* shape = op == "ConstantOfShape" ? data : input(1);
    if (!shaped(shape) || shape->dims.size() != 1 || !shape->dims[0].is_static()) return std::nullopt;
    rank = static_cast<size_t>(shape->dims[0].value);
    if (op == "Expand") {
      if (!shaped(data)) return std::nullopt;
      rank = std::max(rank, data->dims.size());
    }
    if (op == "ConstantOfShape") {
      const Attribute* value = node.attribute("value");
      out.elem_type = value ? static_cast<int32_t>(value->t.dtype()) : static_cast<int32_t>(DType::Float);
    } else {
      if (!data || !data->is_tensor()) return std::nullopt;
      out.elem_type = data->elem_type;
    }
  } else if (op == "RMSNormalization" || op == "Attention") {
    // Opset 23, newer than the ONNX library: Y has X's (Q's) type and layout.
    if (!shaped(data)) return std::nullopt;
    if (op == "RMSNormalization") return *data;
    return attention_output(node, *data, input(2));
  } else if (op == "Tile" || op == "Resize" || op == "Upsample") {
    if (!shaped(data)) return std::nullopt;
    rank = data->dims.size();
    out.elem_type = data->elem_type;
  } else {
    return std::nullopt;
  }
  out.has_shape = true;
  out.dims.assign(rank, Dim{});
  return out;
}

TypeMap collect(const onnx::ModelProto& proto, const Model& model) {
  TypeMap types;
  auto add = [&](const onnx::ValueInfoProto& vi) {
    if (vi.has_type()) types.try_emplace(vi.name(), detail::value_type_from_proto(vi.type()));
  };
  // Inference merges declared value_info with what it infers, so its results come first.
  for (const auto& vi : proto.graph().input()) add(vi);
  for (const auto& vi : proto.graph().value_info()) add(vi);
  for (const auto& vi : proto.graph().output()) add(vi);
  for (const auto& init : model.graph.initializers)
    types.try_emplace(init.name, ValueType::tensor(init.tensor.dtype(), init.tensor.shape()));
  for (const auto& vi : model.graph.value_info)
    if (vi.type.kind != ValueType::Kind::Unknown) types.try_emplace(vi.name, vi.type);
  return types;
}

void collect_bodies(const Graph& graph, const onnx::GraphProto& proto, const TypeMap& outer, BodyValueTypes& out);

// A body's types: the enclosing scope's, then the body's inputs, inferred values, outputs and weights.
void collect_body(const Graph& body, const onnx::GraphProto& proto, const TypeMap& outer, BodyValueTypes& out) {
  TypeMap types = outer;
  auto add = [&](const onnx::ValueInfoProto& vi) {
    if (vi.has_type()) types.insert_or_assign(vi.name(), detail::value_type_from_proto(vi.type()));
  };
  for (const auto& vi : proto.input()) add(vi);
  for (const auto& vi : proto.value_info()) add(vi);
  for (const auto& vi : proto.output()) add(vi);
  for (const auto& init : body.initializers)
    types.insert_or_assign(init.name, ValueType::tensor(init.tensor.dtype(), init.tensor.shape()));
  collect_bodies(body, proto, types, out);
  out[&body] = std::move(types);
}

// Whether a proto node is the export of `node` (same op type and outputs).
bool exports(const onnx::NodeProto& proto, const Node& node) {
  if (proto.op_type() != node.op_type || static_cast<size_t>(proto.output_size()) != node.outputs.size()) return false;
  for (size_t k = 0; k < node.outputs.size(); ++k)
    if (proto.output(static_cast<int>(k)) != node.outputs[k]) return false;
  return true;
}

// Walks the model's graph and its proto side by side (model_to_proto keeps node and attribute
// order, and adds Constant nodes for initializers that were Constant nodes, which the walk skips);
// a graph whose proto differs in layout contributes nothing from there on.
void collect_bodies(const Graph& graph, const onnx::GraphProto& proto, const TypeMap& outer, BodyValueTypes& out) {
  int at = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i, ++at) {
    while (at < proto.node_size() && !exports(proto.node(at), graph.nodes[i])) ++at;
    if (at == proto.node_size()) return;
    for (const Attribute& a : graph.nodes[i].attributes)
      for (const auto& pa : proto.node(at).attribute()) {
        if (pa.name() != a.name) continue;
        if (a.g && pa.has_g()) collect_body(*a.g, pa.g(), outer, out);
        for (size_t k = 0; k < a.graphs.size() && k < static_cast<size_t>(pa.graphs_size()); ++k)
          collect_body(*a.graphs[k], pa.graphs(static_cast<int>(k)), outer, out);
      }
  }
}

}  // namespace

Expected<std::unordered_map<std::string, ValueType>> infer_value_types(const Model& model, BodyValueTypes* bodies) {
  // ONNX's inference trusts arity and attributes (a zero stride is a division by zero in it).
  REDUCE_TRY(validate_model(model));
  TypeOnlyPlacement placement;
  onnx::ModelProto proto = detail::model_to_proto(model, &placement);
  TypeMap types;
  // Each round adds ranks that the fallback can derive, which lets ONNX go further downstream.
  // On a model newer than the library (IR > 8, opsets > 17) its inference is a help, never a
  // judge: when it throws, the declared types and our own rules stand.
  const bool library_knows = onnx_checker_knows(model);
  bool library_gave_up = false;
  for (int round = 0; round < 16; ++round) {
    if (!library_gave_up) try {
      onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true);
      onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception& e) {
      if (library_knows) return make_error(std::string("ONNX shape inference failed: ") + e.what());
      library_gave_up = true;
    }
    types = collect(proto, model);
    bool added = false;
    std::unordered_map<std::string, onnx::ValueInfoProto*> entries;
    for (auto& vi : *proto.mutable_graph()->mutable_value_info()) entries.emplace(vi.name(), &vi);
    for (const Node& node : model.graph.nodes) {
      if (node.outputs.empty() || node.outputs[0].empty()) continue;
      const ValueType* known = find(types, node.outputs[0]);
      if (known && known->has_shape) continue;
      if (auto t = fallback_type(node, types)) {
        auto it = entries.find(node.outputs[0]);
        onnx::ValueInfoProto* vi = it != entries.end() ? it->second : proto.mutable_graph()->add_value_info();
        vi->set_name(node.outputs[0]);
        vi->clear_type();
        detail::value_type_to_proto(*t, *vi->mutable_type());
        added = true;
      }
    }
    if (!added) break;
  }
  if (bodies) collect_bodies(model.graph, proto.graph(), types, *bodies);
  return types;
}

}  // namespace reduce
