// Shell words and Python string literals for the commands and scripts people run.
#include "adapters/script_words.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace reduce {

namespace {

bool shell_safe(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("@%+=:,./-_{}").find(c) != std::string_view::npos;
}

// Braces stay readable (`--onnx={model}`), except where bash would expand them (`{a,b}`, `{1..3}`).
bool brace_expands(const std::string& s) {
  return s.find('{') != std::string::npos && (s.find(',') != std::string::npos || s.find("..") != std::string::npos);
}

}  // namespace

std::string shell_word(const std::string& s) {
  if (!s.empty() && std::all_of(s.begin(), s.end(), shell_safe) && !brace_expands(s)) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shell_command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + shell_word(a);
  return out;
}

std::string python_string(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace reduce
