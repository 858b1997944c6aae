// Failure signatures: how they read and the same-failure rule (normalization: message_normalization.cpp).
#include "oracle/signature.h"

#include <algorithm>
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
    case FailureKind::Shape: return "shape";
  }
  return "?";
}

bool compares_outputs(FailureKind kind) {
  return kind == FailureKind::Mismatch || kind == FailureKind::NonFinite || kind == FailureKind::Shape;
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
    case FailureKind::Shape:
      // Not which outputs: cutting the nodes after the culprit makes its own output the candidate's,
      // and the same bug may give another wrong shape there. What differs must stay the same.
      return candidate.normalized == target.normalized ? SignatureMatch::Same : SignatureMatch::Different;
    default:
      return SignatureMatch::Same;
  }
}

namespace {

// Control bytes (NUL, ESC, a carriage return that would redraw the line) as \xHH: a terminal shows
// them as they are, and a report keeps them readable. Newlines and tabs stay.
std::string escape_controls(std::string text) {
  const auto control = [](unsigned char c) { return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f; };
  if (std::none_of(text.begin(), text.end(), [&](char c) { return control(static_cast<unsigned char>(c)); })) return text;
  std::string out;
  out.reserve(text.size() + 16);
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (!control(c)) {
      out += ch;
      continue;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::string shown_unescaped(std::string_view message) {
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

}  // namespace

std::string shown_message(std::string_view message) { return escape_controls(shown_unescaped(message)); }

}  // namespace reduce
