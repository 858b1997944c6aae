// Encoding feeds for and decoding results from the ONNX Runtime worker (frames: ort_protocol.h).
#include "ort/ort_protocol.h"

namespace reduce::ort_protocol {

namespace {

// A bounds-checked cursor over a payload.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool u32(uint32_t& v) { return raw(&v, 4); }
  bool u64(uint64_t& v) { return raw(&v, 8); }
  bool bytes(size_t n, std::string_view& out) {
    if (n > data_.size() - at_) return false;
    out = data_.substr(at_, n);
    at_ += n;
    return true;
  }

 private:
  bool raw(void* v, size_t n) {
    if (n > data_.size() - at_) return false;
    std::memcpy(v, data_.data() + at_, n);  // little-endian on every platform onnxruntime-node runs on
    at_ += n;
    return true;
  }
  std::string_view data_;
  size_t at_ = 0;
};

}  // namespace

std::string encode_run(const TensorMap& feeds, const std::vector<std::string>& fetches) {
  size_t bytes = 8;
  for (const auto& [name, t] : feeds) bytes += name.size() + 24 + 8 * t.rank() + t.byte_size();
  std::string out;
  out.reserve(bytes);
  put_u32(out, static_cast<uint32_t>(feeds.size()));
  for (const auto& [name, t] : feeds) {
    put_string(out, name);
    put_u32(out, static_cast<uint32_t>(t.dtype()));
    put_u32(out, static_cast<uint32_t>(t.rank()));
    for (int64_t d : t.shape()) put_u64(out, static_cast<uint64_t>(d));
    put_u64(out, t.byte_size());
    out.append(reinterpret_cast<const char*>(t.bytes().data()), t.byte_size());
  }
  put_u32(out, static_cast<uint32_t>(fetches.size()));
  for (const auto& name : fetches) put_string(out, name);
  return out;
}

Expected<TensorMap> decode_tensors(std::string_view payload) {
  const auto malformed = [](const std::string& why) { return make_error("the ONNX Runtime worker sent " + why); };
  Reader r(payload);
  uint32_t count = 0;
  if (!r.u32(count)) return malformed("a truncated answer");
  TensorMap out;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t name_bytes = 0, type = 0, rank = 0;
    std::string_view name, data;
    if (!r.u32(name_bytes) || !r.bytes(name_bytes, name) || !r.u32(type) || !r.u32(rank) || rank > 64)
      return malformed("a truncated answer");
    Shape shape(rank);
    for (auto& d : shape) {
      uint64_t v = 0;
      if (!r.u64(v)) return malformed("a truncated answer");
      d = static_cast<int64_t>(v);
    }
    uint64_t data_bytes = 0;
    if (!r.u64(data_bytes) || !r.bytes(data_bytes, data)) return malformed("a truncated answer");
    const auto dtype = dtype_from_onnx(static_cast<int32_t>(type));
    if (!dtype) return malformed("output '" + std::string(name) + "' of unknown type " + std::to_string(type));
    auto tensor = Tensor::copy_of(*dtype, shape, std::as_bytes(std::span(data.data(), data.size())));
    if (!tensor) return malformed("output '" + std::string(name) + "' whose size does not match its shape: " + tensor.error().what);
    out[std::string(name)] = std::move(*tensor);
  }
  return out;
}

}  // namespace reduce::ort_protocol
