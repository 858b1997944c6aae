// Single tensors stored as serialized onnx::TensorProto (.pb), the format of ONNX test data.
#include <climits>

#include "core/mapped_file.h"
#include "core/tensor_file.h"
#include "onnx_convert.h"

namespace reduce {

namespace fs = std::filesystem;

Expected<NamedTensor> read_tensor_pb(const fs::path& path) {
  const std::string where = path.string();
  onnx::TensorProto proto;
  REDUCE_TRY(detail::parse_proto_file(path, proto, "an ONNX TensorProto"));
  if (proto.data_type() == onnx::TensorProto::UNDEFINED)
    return Error{where, "the tensor has no element type (is this a TensorProto .pb file?)"};
  // tensor_from_proto would resolve external data against the working folder; a lone .pb has none.
  if (proto.data_location() == onnx::TensorProto::EXTERNAL || proto.external_data_size() > 0)
    return Error{where, "the tensor refers to external data, which a .pb tensor file cannot use"};
  std::string name = proto.name();
  detail::ImportContext ctx;  // empty base_dir: external data refused
  auto tensor = detail::tensor_from_proto(proto, ctx);
  if (!tensor) return tensor.error().at(where);
  return NamedTensor{std::move(name), std::move(tensor).value()};
}

Status write_tensor_pb(const fs::path& path, const std::string& name, const Tensor& tensor) {
  const std::string where = path.string();
  if (dtype_size(tensor.dtype()) == 0)
    return Error{where, "cannot write a tensor of type " + std::string(dtype_name(tensor.dtype()))};
  // Leave room for the name, dims and field tags below protobuf's 2 GB message limit.
  if (tensor.byte_size() > static_cast<size_t>(INT_MAX) - name.size() - 4096)
    return Error{where, "the tensor is larger than 2 GB, too large for a TensorProto"};
  onnx::TensorProto proto;
  proto.set_name(name);
  detail::tensor_to_proto(tensor, proto);
  std::string serialized;
  if (!proto.SerializeToString(&serialized)) return Error{where, "cannot serialize the tensor"};
  return write_file_atomic(path, serialized);
}

}  // namespace reduce
