// FailureSignature: what kind of failure a run shows and what identifies it, so the reducer keeps
// only candidates that fail *the same way* as the original model.
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>

namespace reduce {

enum class FailureKind { None, Mismatch, NonFinite, Error, Crash, Timeout };

const char* to_string(FailureKind kind);  // "pass", "mismatch", "nonfinite", "error", "crash", "timeout"

struct FailureSignature {
  FailureKind kind = FailureKind::None;
  std::string message;     // as reported (errors: the engine's message; mismatches: a summary)
  std::string normalized;  // errors: message with numbers, addresses, paths and graph names masked
  int signal = 0;          // crash: the signal
  // Mismatches: decimal order of how far over the tolerance the worst output is (0: up to 10x,
  // 1: 10x-100x, ...); a candidate counts as the same failure only from one order below.
  int magnitude = 0;

  bool fails() const { return kind != FailureKind::None; }
  std::string to_string() const;  // one line, e.g. "error: Cast layer <name>: output type conflicts ..."
};

// Masks what changes between candidates of one failure: quoted strings and known graph names
// (node and value names) become <name>, paths <path>, hex addresses <addr>, numbers <n>;
// whitespace runs collapse.
std::string normalize_message(std::string_view message, const std::unordered_set<std::string>& names);

// A failure message as people are shown it (console, report.md): whole up to 4 KiB; longer ones
// (an engine may write megabytes) keep their last 20 lines, each cut after 400 characters, after
// a note of how much was left out. --fail-regex and actual/error.txt see the whole message.
std::string shown_message(std::string_view message);

// Decimal order of a mismatch ratio (see FailureSignature::magnitude).
int magnitude_class(double ratio);

// How a candidate's signature relates to the original's.
enum class SignatureMatch {
  Same,       // same kind, same identifying details
  Different,  // fails, but differently ("slippage")
  Pass,       // does not fail
};

SignatureMatch match_signature(const FailureSignature& target, const FailureSignature& candidate);

}  // namespace reduce
