// normalize_message: an engine's message with what changes between candidates masked (numbers,
// paths, addresses, the model's names) and what identifies the failure kept (operators, words).
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "core/validate.h"
#include "oracle/signature.h"

namespace reduce {

namespace {

using Names = std::unordered_set<std::string>;
constexpr size_t npos = std::string_view::npos;

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)); }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }
bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)); }

bool is_name_char(char c) {
  return is_alnum(c) || c == '_' || c == '.' || c == '/' || c == '\\' || c == ':' || c == '-';
}

// One of the model's node or value names, never an operator's name: a node may be called "Clip",
// and a refused Clip is not a refused HardSigmoid.
bool is_model_name(const std::string& s, const Names& names) { return names.count(s) > 0 && !is_onnx_op_type(s); }

// The end of the number that starts at s[i] (a digit): a run of digits and letters ("42", "3f9a",
// "1x3x64x64"), an exponent's sign ("1e-05") and dot-separated groups ("1.12.1", "0.5").
size_t number_end(std::string_view s, size_t i) {
  auto run = [&] {
    while (i < s.size() && is_alnum(s[i])) ++i;
  };
  run();
  while (i + 1 < s.size()) {
    const bool exponent = (s[i - 1] == 'e' || s[i - 1] == 'E') && (s[i] == '+' || s[i] == '-') && is_digit(s[i + 1]);
    const bool group = s[i] == '.' && is_digit(s[i + 1]);
    if (!exponent && !group) break;
    ++i;
    run();
  }
  return i;
}

// "v1.16.3" is a version as "1.16.3" is; "v9200" or "vgg16" are words.
bool starts_version(std::string_view s, size_t i) {
  if (s[i] != 'v' && s[i] != 'V') return false;
  size_t j = i + 1;
  while (j < s.size() && is_digit(s[j])) ++j;
  return j > i + 1 && j + 1 < s.size() && s[j] == '.' && is_digit(s[j + 1]);
}

// Numbers become <n> (hex ones <addr>) where a word starts: "node_17" -> "node_<n>", "ortnode-1.12.1"
// -> "ortnode-<n>", but the digits of a word stay ("FLOAT16", "int64", "opset13", "Conv2D").
std::string mask_numbers(std::string_view s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const bool word_start = i == 0 || !is_alnum(s[i - 1]);
    if (word_start && starts_version(s, i)) {
      out += s[i];
      out += "<n>";
      i = number_end(s, i + 1);
      continue;
    }
    if (word_start && is_digit(s[i])) {
      const size_t end = number_end(s, i);
      const bool hex = end - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X');
      out += hex ? "<addr>" : "<n>";
      i = end;
      continue;
    }
    out += s[i++];
  }
  return out;
}

// A file path: absolute or explicitly relative ("/tmp/x/model.onnx", "./modules/dnn", "D:\a\s"), or
// relative with a file at its end ("modules/dnn/src/layer.cpp"). Not "function/feature", "N/A",
// "DNN/ONNX/Attribute" or a date.
bool is_path(std::string_view s) {
  const size_t slash = s.find_last_of("/\\");
  if (slash == npos || std::none_of(s.begin(), s.end(), is_alnum)) return false;
  if (s[0] == '/' || s[0] == '\\' || s[0] == '.' || s[0] == '~') return true;
  return s.find('.', slash) != npos;
}

// A part of a token between colons: a model name, a path, or text whose numbers are masked.
std::string mask_piece(const std::string& piece, const Names& names) {
  if (piece.empty()) return piece;
  if (is_model_name(piece, names)) return "<name>";
  if (is_path(piece)) return "<path>";
  return mask_numbers(piece);
}

// One token (a run of name characters) with its masks. A token may join several things with
// colons ("Node:conv_7", ":/tmp/x.pb" after a quoted input name, "Analyzer.cpp::analyze::1872").
std::string mask_token(std::string token, const Names& names) {
  // Trailing punctuation that ends a sentence or a "name:" label is not part of the token.
  std::string tail;
  while (!token.empty() && (token.back() == '.' || token.back() == ':' || token.back() == '-')) {
    tail.insert(tail.begin(), token.back());
    token.pop_back();
  }
  if (is_model_name(token, names)) return "<name>" + tail;
  std::string out;
  size_t start = 0;
  for (size_t colon = token.find(':'); colon != std::string::npos; colon = token.find(':', start)) {
    out += mask_piece(token.substr(start, colon - start), names) + ':';
    start = colon + 1;
  }
  return out + mask_piece(token.substr(start), names) + tail;
}

// The closing quote of a quoted string opened at s[i], or npos when s[i] opens none: an apostrophe
// inside a word ("Can't") opens nothing, a quote closes only before a non-word character, and a
// quoted string ends on its line.
size_t quote_end(std::string_view s, size_t i) {
  if (i > 0 && is_alnum(s[i - 1])) return npos;
  for (size_t j = i + 1; j < s.size() && s[j] != '\n'; ++j)
    if (s[j] == s[i] && (j + 1 == s.size() || !is_alnum(s[j + 1]))) return j;
  return npos;
}

std::string normalize_text(std::string_view message, const Names& names);

// A quoted string is masked whole when it is a model name, a path or a number; otherwise (an
// operator, a word, a sentence) it keeps its quotes and is normalized as text.
std::string mask_quoted(std::string_view content, char quote, const Names& names) {
  const std::string c(content);
  if (is_model_name(c, names)) return "<name>";
  const bool one_word = !c.empty() && c.find_first_of(" \t") == std::string::npos;
  if (one_word && is_path(c)) return "<path>";
  if (one_word && mask_numbers(c) == "<n>") return "<n>";
  return quote + normalize_text(content, names) + quote;
}

std::string normalize_text(std::string_view message, const Names& names) {
  std::string out;
  size_t i = 0;
  while (i < message.size()) {
    const char c = message[i];
    if (c == '\'' || c == '"' || c == '`') {
      if (const size_t end = quote_end(message, i); end != npos) {
        out += mask_quoted(message.substr(i + 1, end - i - 1), c, names);
        i = end + 1;
        continue;
      }
    }
    if (is_space(c)) {
      if (!out.empty() && out.back() != ' ') out += ' ';
      ++i;
      continue;
    }
    if (is_name_char(c)) {
      size_t j = i;
      while (j < message.size() && is_name_char(message[j])) ++j;
      out += mask_token(std::string(message.substr(i, j - i)), names);
      i = j;
      continue;
    }
    out += c;
    ++i;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The end of `item` made only of masks and the punctuation between them ("<name><path>", ":<n>"):
// empty unless it holds a masked name or path.
std::string_view masked_suffix(std::string_view item) {
  size_t start = item.size();
  for (;;) {
    bool stripped = false;
    for (std::string_view mask : {"<name>", "<path>", "<addr>", "<n>"})
      if (start >= mask.size() && item.substr(start - mask.size(), mask.size()) == mask) {
        start -= mask.size();
        stripped = true;
        break;
      }
    if (!stripped && start > 0 && (item[start - 1] == ':' || item[start - 1] == '@')) --start, stripped = true;
    if (!stripped) break;
  }
  const std::string_view suffix = item.substr(start);
  const bool named = suffix.find("<name>") != std::string_view::npos || suffix.find("<path>") != std::string_view::npos;
  return named ? suffix : std::string_view{};
}

// A comma-separated list of masked names or paths ("--loadInputs=<name>:<path>,<name>:<path>") has
// as many items as the model has inputs or outputs: its repeats are dropped, so that a message that
// echoes such a list (trtexec echoes its command line) is the same whatever the list's length.
std::string collapse_masked_lists(const std::string& s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != ',') ++j;
    const std::string_view item(s.data() + i, j - i);
    out.append(item);
    const std::string_view unit = masked_suffix(item);
    while (!unit.empty() && j < s.size() && s[j] == ',' && s.compare(j + 1, unit.size(), unit) == 0 &&
           (j + 1 + unit.size() == s.size() || s[j + 1 + unit.size()] == ' ' || s[j + 1 + unit.size()] == ','))
      j += 1 + unit.size();
    if (j < s.size()) out += s[j];
    i = j + 1;
  }
  return out;
}

}  // namespace

std::string normalize_message(std::string_view message, const std::unordered_set<std::string>& names) {
  return collapse_masked_lists(normalize_text(message, names));
}

}  // namespace reduce
