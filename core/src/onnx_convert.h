// Private to core: conversions between onnx protobuf messages and the IR. Nothing else sees onnx.
#pragma once

#include <google/protobuf/io/zero_copy_stream.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>
#include <string>

#include "core/mapped_file.h"
#include "core/model.h"
#include "core/model_io.h"

namespace reduce::detail {

// State shared while importing one model: where external data may come from, and the files mapped.
struct ImportContext {
  std::filesystem::path base_dir;  // the model's folder; empty means external data is refused
  std::map<std::filesystem::path, std::shared_ptr<MappedFile>> mapped;
};

// Converts a TensorProto; may take ownership of its raw_data (no copy). External data is mapped.
Expected<Tensor> tensor_from_proto(onnx::TensorProto& proto, ImportContext& ctx);
ValueType value_type_from_proto(const onnx::TypeProto& proto);
Expected<Model> model_from_proto(onnx::ModelProto& proto, ImportContext& ctx);

// Decides, per initializer, whether it goes inline or into an external file.
class WeightPlacement {
 public:
  virtual ~WeightPlacement() = default;
  // Fills the external_data fields of `proto` and returns true, or returns false to inline.
  virtual bool place_external(const Tensor& tensor, onnx::TensorProto& proto) = 0;
  // For an initializer kept inline: returns true when its bytes are to be written from `tensor` by
  // a StreamedModel (model_to_proto then sets only the header), false to copy them into `proto`.
  virtual bool stream_inline(const Tensor& tensor, const onnx::TensorProto& proto) { return false; }
};

// A model proto split so that the inline bytes of chosen main-graph initializers are written from
// their tensors: the bytes protobuf would write for the whole message, without a second copy of
// those weights in the proto (64 MB for one float[4096,4096] weight).
class StreamedModel {
 public:
  // `streamed`: initializers of proto's main graph, with no raw_data, and the tensors holding it.
  StreamedModel(onnx::ModelProto proto, const std::vector<std::pair<const onnx::TensorProto*, Tensor>>& streamed);
  uint64_t size() const { return size_; }
  bool write(google::protobuf::io::ZeroCopyOutputStream& out) const;

 private:
  struct Initializer {
    onnx::TensorProto head, tail;  // fields before raw_data (9), fields after it
    std::optional<Tensor> raw;
    uint64_t size = 0;
  };
  onnx::ModelProto head_, tail_;  // fields before graph (7), fields after it
  onnx::GraphProto graph_head_, graph_tail_;  // before initializer (5), after it
  std::vector<Initializer> initializers_;
  uint64_t graph_size_ = 0, size_ = 0;
};

void tensor_to_proto(const Tensor& tensor, onnx::TensorProto& proto);
// Only the element type and dims (the data is placed separately).
void tensor_header_to_proto(const Tensor& tensor, onnx::TensorProto& proto);

// Maps a whole file and parses one protobuf message from it. `what` names the expected content
// in errors ("an ONNX model"); errors carry the file as `where`.
Status parse_proto_file(const std::filesystem::path& path, google::protobuf::MessageLite& message,
                        const std::string& what);
// Maps and parses a binary model, refusing subgraphs nested deeper than kMaxSubgraphDepth
// (checked on the wire, before protobuf recurses into them).
// The external-data file names (`location`, as written) a serialized model refers to, each once,
// found without parsing the model (its weights are not read).
std::vector<std::string> external_data_locations(std::span<const std::byte> model);
// `mapped`, when given, receives the mapping of the file the model was parsed from.
Status parse_model_file(const std::filesystem::path& path, onnx::ModelProto& model,
                        std::shared_ptr<const MappedFile>* mapped = nullptr);
void value_type_to_proto(const ValueType& type, onnx::TypeProto& proto);
onnx::ModelProto model_to_proto(const Model& model, WeightPlacement* placement);

// Marks `proto` as stored in external data at `location` (offset, length); drops inline bytes.
void set_external_location(onnx::TensorProto& proto, const std::string& location, uint64_t offset,
                           uint64_t length);

}  // namespace reduce::detail
