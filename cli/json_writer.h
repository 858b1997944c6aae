// JsonWriter: writes the small JSON documents of a bundle (report.json, summary.json) with correct
// escaping and stable key order (the caller's order).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace reduce::cli {

class JsonWriter {
 public:
  JsonWriter& begin_object() { value_prefix(); out_ += '{'; stack_.push_back(true); return *this; }
  JsonWriter& end_object() { close('}'); return *this; }
  JsonWriter& begin_array() { value_prefix(); out_ += '['; stack_.push_back(true); return *this; }
  JsonWriter& end_array() { close(']'); return *this; }
  JsonWriter& key(std::string_view k) {
    separator();
    indent();
    append_string(k);
    out_ += ": ";
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(std::string_view s) { value_prefix(); append_string(s); return *this; }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b) { value_prefix(); out_ += b ? "true" : "false"; return *this; }
  JsonWriter& value(int64_t v) { value_prefix(); out_ += std::to_string(v); return *this; }
  JsonWriter& value(uint64_t v) { value_prefix(); out_ += std::to_string(v); return *this; }
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(double v) {
    value_prefix();
    if (!std::isfinite(v)) { out_ += "null"; return *this; }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    out_ += buf;
    return *this;
  }
  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) { key(k); return value(v); }

  std::string str() const { return out_ + "\n"; }

 private:
  void separator() {
    if (stack_.empty()) return;
    if (!stack_.back()) out_ += ',';
    stack_.back() = false;
  }
  void indent() { out_ += '\n'; out_.append(2 * stack_.size(), ' '); }
  void value_prefix() {
    if (after_key_) { after_key_ = false; return; }
    if (!stack_.empty()) { separator(); indent(); }
  }
  void close(char c) {
    const bool empty = stack_.back();
    stack_.pop_back();
    if (!empty) indent();
    out_ += c;
  }
  void append_string(std::string_view s) {
    out_ += '"';
    for (unsigned char c : s) {
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\r': out_ += "\\r"; break;
        case '\t': out_ += "\\t"; break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out_ += buf;
          } else {
            out_ += static_cast<char>(c);
          }
      }
    }
    out_ += '"';
  }

  std::string out_;
  std::vector<bool> stack_;  // per open container: still empty?
  bool after_key_ = false;
};

}  // namespace reduce::cli
