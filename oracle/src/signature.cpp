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
  return out;
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
