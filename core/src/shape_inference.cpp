// Value types for a whole graph from declared value_info plus ONNX shape inference.
#include <onnx/shape_inference/implementation.h>

#include "core/extract.h"
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
}  // namespace

Expected<std::unordered_map<std::string, ValueType>> infer_value_types(const Model& model) {
  TypeOnlyPlacement placement;
  onnx::ModelProto proto = detail::model_to_proto(model, &placement);
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true);
    onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return make_error(std::string("ONNX shape inference failed: ") + e.what());
  }
  std::unordered_map<std::string, ValueType> types;
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

}  // namespace reduce
