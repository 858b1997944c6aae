// FailureSignature: what kind of failure a run shows and what identifies it, so the reducer keeps
// only candidates that fail *the same way* as the original model.
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>

namespace reduce {

// Shape: an output of another shape or element type than the reference's (last, so that the
// numbers of the others, which cross process boundaries, stay as they were).
enum class FailureKind { None, Mismatch, NonFinite, Error, Crash, Timeout, Shape };

// "pass", "mismatch", "nonfinite", "error", "crash", "timeout", "shape"
const char* to_string(FailureKind kind);

// Whether the engine ran and its outputs were found wrong (mismatch, nonfinite, shape), as opposed
// to a run that gave no outputs (error, crash, timeout).
bool compares_outputs(FailureKind kind);

struct FailureSignature {
  FailureKind kind = FailureKind::None;
  // As reported: errors, the engine's message; mismatches, a summary; shape failures, the first
  // output of another shape with both types ("output `y` is float[1,4] on the engine, float[1,3] on
  // the reference").
  std::string message;
  // Errors: the message with numbers, addresses, paths and graph names masked. Shape failures: what
  // differs over all outputs ("shape differs", "element type differs", "element type and shape differ").
  std::string normalized;
  int signal = 0;          // crash: the signal
  // Mismatches: decimal order of how far over the tolerance the worst output is (0: up to 10x,
  // 1: 10x-100x, ...); a candidate counts as the same failure only from one order below.
  int magnitude = 0;
  int exit_code = 0;  // a check: script's failing exit code (its normalized message says it too)

  bool fails() const { return kind != FailureKind::None; }
  std::string to_string() const;  // one line, e.g. "error: Cast layer <name>: output type conflicts ..."
};

// Masks what changes between candidates of one failure and keeps what tells failures apart. The
// model's node and value names (`names`, never an ONNX operator's name) become <name>, tokens with a
// slash <path>, hex numbers <addr>, numbers where a word starts <n> ("node_17" -> "node_<n>",
// "1.12.1" -> "<n>"; "FLOAT16", "int64" and "opset13" stay); operators and other words stay. A
// quoted string is masked whole only when it is a name, a path or a number (an apostrophe inside
// a word quotes nothing); a comma list of masked names or paths counts as one item; whitespace
// runs collapse. docs/oracle.md has a table of real engine messages and what each becomes.
std::string normalize_message(std::string_view message, const std::unordered_set<std::string>& names);

// A failure message as people are shown it (console, report.md): whole up to 4 KiB; longer ones
// (an engine may write megabytes) keep their last 20 lines, each cut after 400 characters, after
// a note of how much was left out. Control bytes (NUL, ESC, CR) are shown as \xHH. --fail-regex and
// actual/error.txt see the whole message, as the engine wrote it.
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
