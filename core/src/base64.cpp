// RFC 4648 base64, as Python's base64 module writes it (Polygraphy's files, scripts that carry files).
#include "core/base64.h"

#include <algorithm>
#include <cstdint>

namespace reduce {

namespace {

constexpr std::string_view kBase64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The value of one base64 digit, or -1.
int base64_digit(char c) {
  const auto p = kBase64.find(c);
  return p == std::string_view::npos ? -1 : static_cast<int>(p);
}

}  // namespace

Expected<std::string> decode_base64(const std::string& text) {
  if (text.size() % 4 != 0) return make_error("base64 text of " + std::to_string(text.size()) + " characters (not a multiple of 4)");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    size_t pad = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0 || (v[k] = base64_digit(c)) < 0) return make_error("invalid base64 at character " + std::to_string(i + k));
    }
    const uint32_t bits = (static_cast<uint32_t>(v[0]) << 18) | (static_cast<uint32_t>(v[1]) << 12) |
                          (static_cast<uint32_t>(v[2]) << 6) | static_cast<uint32_t>(v[3]);
    out.push_back(static_cast<char>(bits >> 16));
    if (pad < 2) out.push_back(static_cast<char>((bits >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(bits & 0xff));
  }
  return out;
}

std::string encode_base64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t bits = 0;
    for (size_t k = 0; k < 3; ++k) bits = (bits << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    for (size_t k = 0; k < 4; ++k) out.push_back(k <= n ? kBase64[(bits >> (18 - 6 * k)) & 63] : '=');
  }
  return out;
}

}  // namespace reduce
