// Writes a model proto whose main-graph initializers keep their bytes in their tensors: the same
// bytes protobuf would write, without a second whole copy of the inline weights in the proto.
#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <climits>
#include <unordered_map>

#include "onnx_convert.h"

namespace reduce::detail {

namespace {

using google::protobuf::io::CodedOutputStream;

// Tag of a length-delimited field; every field written here is numbered below 16 (one byte).
constexpr uint32_t length_delimited(int field) { return (static_cast<uint32_t>(field) << 3) | 2; }

uint64_t field_size(uint64_t payload) { return 1 + CodedOutputStream::VarintSize64(payload) + payload; }

void write_field_header(CodedOutputStream& out, int field, uint64_t payload) {
  out.WriteTag(length_delimited(field));
  out.WriteVarint64(payload);
}

}  // namespace

StreamedModel::StreamedModel(onnx::ModelProto proto, const std::vector<std::pair<const onnx::TensorProto*, Tensor>>& streamed) {
  // Protobuf writes fields in field-number order: the model's 1-6, graph (7), then 8 and up; the
  // graph's node (1) and name (2), initializers (5), then 10 and up; a tensor's 1-8, raw_data (9),
  // then 12 and up. Each part around the streamed bytes is a message protobuf serializes itself.
  graph_tail_ = std::move(*proto.mutable_graph());
  proto.clear_graph();
  head_ = std::move(proto);
  tail_.mutable_opset_import()->Swap(head_.mutable_opset_import());
  tail_.mutable_metadata_props()->Swap(head_.mutable_metadata_props());
  tail_.mutable_training_info()->Swap(head_.mutable_training_info());
  tail_.mutable_functions()->Swap(head_.mutable_functions());
  graph_head_.mutable_node()->Swap(graph_tail_.mutable_node());
  if (graph_tail_.has_name()) {
    graph_head_.set_name(graph_tail_.name());
    graph_tail_.clear_name();
  }
  std::unordered_map<const onnx::TensorProto*, const Tensor*> raw_of;
  for (const auto& [proto, tensor] : streamed) raw_of.emplace(proto, &tensor);
  google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
  initializers.Swap(graph_tail_.mutable_initializer());
  graph_size_ = graph_head_.ByteSizeLong() + graph_tail_.ByteSizeLong();
  for (auto& init : initializers) {
    Initializer part;
    if (auto it = raw_of.find(&init); it != raw_of.end()) {
      part.raw = *it->second;
      if (init.has_doc_string()) {
        part.tail.set_doc_string(init.doc_string());
        init.clear_doc_string();
      }
    }
    part.head = std::move(init);
    part.size = part.head.ByteSizeLong() + part.tail.ByteSizeLong() + (part.raw ? field_size(part.raw->byte_size()) : 0);
    graph_size_ += field_size(part.size);
    initializers_.push_back(std::move(part));
  }
  size_ = head_.ByteSizeLong() + field_size(graph_size_) + tail_.ByteSizeLong();
}

bool StreamedModel::write(google::protobuf::io::ZeroCopyOutputStream& stream) const {
  CodedOutputStream out(&stream);
  head_.SerializeWithCachedSizes(&out);
  write_field_header(out, 7, graph_size_);
  graph_head_.SerializeWithCachedSizes(&out);
  for (const Initializer& init : initializers_) {
    write_field_header(out, 5, init.size);
    init.head.SerializeWithCachedSizes(&out);
    if (init.raw) {
      const auto bytes = init.raw->bytes();
      write_field_header(out, 9, bytes.size());
      for (size_t at = 0; at < bytes.size(); at += INT_MAX / 2) {
        const size_t n = std::min<size_t>(INT_MAX / 2, bytes.size() - at);
        out.WriteRaw(bytes.data() + at, static_cast<int>(n));
      }
    }
    init.tail.SerializeWithCachedSizes(&out);
  }
  graph_tail_.SerializeWithCachedSizes(&out);
  tail_.SerializeWithCachedSizes(&out);
  out.Trim();
  return !out.HadError();
}

}  // namespace reduce::detail
