// The binary frames between the `ort` engine and its Node.js worker (scripts/ort/ort_worker.js says
// the same from the other side): u32 type, u32 id, u64 payload bytes, little-endian, then the payload.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"

namespace reduce::ort_protocol {

enum class Frame : uint32_t {
  Load = 1,      // id: a session; payload: the model's bytes                  -> Ok | Error
  Run = 2,       // id: a session; payload: feeds (tensors), then fetch names  -> Tensors | Error
  Free = 3,      // id: a session to drop; no answer
  Hello = 10,    // the worker's first frame: "onnxruntime-node VERSION"
  Ok = 11,
  Error = 12,    // payload: the message (UTF-8)
  Tensors = 13,  // payload: tensors
};

constexpr size_t kHeaderBytes = 16;
// A frame larger than this is a broken worker, not data (a tensor is at most max_tensor_bytes()).
constexpr uint64_t kMaxPayloadBytes = uint64_t{64} << 30;

inline void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
inline void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
inline void put_string(std::string& out, std::string_view s) {
  put_u32(out, static_cast<uint32_t>(s.size()));
  out += s;
}

inline std::string header(Frame type, uint32_t id, uint64_t payload_bytes) {
  std::string out;
  put_u32(out, static_cast<uint32_t>(type));
  put_u32(out, id);
  put_u64(out, payload_bytes);
  return out;
}

// A RUN payload: the feeds in name order, then the names of the values to return.
std::string encode_run(const TensorMap& feeds, const std::vector<std::string>& fetches);

// Reads the tensors of a TENSORS payload; errors name what is malformed.
Expected<TensorMap> decode_tensors(std::string_view payload);

}  // namespace reduce::ort_protocol
