// Failure signatures: message normalization and the same-failure rule.
#include "oracle/signature.h"

#include <cctype>
#include <cmath>
#include <string>
#include <vector>

namespace reduce {

const char* to_string(FailureKind kind) {
  switch (kind) {
    case FailureKind::None: return "pass";
    case FailureKind::Mismatch: return "mismatch";
    case FailureKind::NonFinite: return "nonfinite";
    case FailureKind::Error: return "error";
    case FailureKind::Crash: return "crash";
    case FailureKind::Timeout: return "timeout";
  }
  return "?";
}

std::string FailureSignature::to_string() const {
  std::string s = reduce::to_string(kind);
  switch (kind) {
    case FailureKind::Error: return s + ": " + normalized;
    case FailureKind::Crash: return s + ": signal " + std::to_string(signal);
    case FailureKind::Mismatch: return s + ": error up to 10^" + std::to_string(magnitude + 1) + " x tolerance";
    default: return message.empty() ? s : s + ": " + message;
  }
}

int magnitude_class(double ratio) {
  if (!(ratio > 1)) return 0;
  if (std::isinf(ratio)) return 99;
  return static_cast<int>(std::floor(std::log10(ratio)));
}

namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == ':' || c == '-';
}

// One token (a run of name characters) replaced by its mask, or kept.
std::string mask_token(std::string token, const std::unordered_set<std::string>& names) {
  // Trailing punctuation that ends a sentence or a "name:" label is not part of the token.
  std::string tail;
  while (!token.empty() && (token.back() == '.' || token.back() == ':' || token.back() == '-')) {
    tail.insert(tail.begin(), token.back());
    token.pop_back();
  }
  if (token.empty()) return tail;
  if (names.count(token)) return "<name>" + tail;
  if (token.find('/') != std::string::npos) return "<path>" + tail;
  if (token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X')) return "<addr>" + tail;
  // Numbers (and identifiers with digits, like node_17 or tmp_3f9a) lose their digits.
  std::string out;
  bool in_digits = false;
  for (char c : token) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (!in_digits) out += "<n>";
      in_digits = true;
    } else {
      if (!(in_digits && c == '.')) out += c;
      in_digits = false;
    }
  }
  return out + tail;
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

// A comma-separated list of masked names or paths ("--loadInputs=<name><path>,<name><path>") has
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
  std::string out;
  size_t i = 0;
  auto append_space = [&] {
    if (!out.empty() && out.back() != ' ') out += ' ';
  };
  while (i < message.size()) {
    const char c = message[i];
    if (c == '\'' || c == '"' || c == '`') {
      const size_t end = message.find(c, i + 1);
      if (end != std::string_view::npos) {
        out += "<name>";
        i = end + 1;
        continue;
      }
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      append_space();
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
  return collapse_masked_lists(out);
}

SignatureMatch match_signature(const FailureSignature& target, const FailureSignature& candidate) {
  if (!candidate.fails()) return SignatureMatch::Pass;
  if (candidate.kind != target.kind) return SignatureMatch::Different;
  switch (target.kind) {
    case FailureKind::Error:
      return candidate.normalized == target.normalized ? SignatureMatch::Same : SignatureMatch::Different;
    case FailureKind::Crash:
      return candidate.signal == target.signal ? SignatureMatch::Same : SignatureMatch::Different;
    case FailureKind::Mismatch:
      // Plain rounding noise must not stand in for the original error.
      return candidate.magnitude >= target.magnitude - 1 ? SignatureMatch::Same : SignatureMatch::Different;
    default:
      return SignatureMatch::Same;
  }
}

std::string shown_message(std::string_view message) {
  constexpr size_t kWhole = 4096, kLines = 20, kLineChars = 400;
  if (message.size() <= kWhole) return std::string(message);
  std::vector<std::string_view> lines;
  size_t end = message.size();
  while (end > 0 && lines.size() < kLines) {
    const size_t newline = message.rfind('\n', end - 1);
    const size_t start = newline == std::string_view::npos ? 0 : newline + 1;
    if (start < end) lines.push_back(message.substr(start, end - start));
    if (newline == std::string_view::npos) {
      end = 0;
      break;
    }
    end = newline;
  }
  std::string out = "[" + std::to_string(message.size()) + " bytes of output; the last lines:]";
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    out += "\n";
    out += it->size() > kLineChars ? std::string(it->substr(0, kLineChars)) + " [line truncated]" : std::string(*it);
  }
  return out;
}

}  // namespace reduce
