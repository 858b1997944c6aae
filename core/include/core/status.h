// Error and Expected<T>: how everything that can fail on user data reports it.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace reduce {

// How a failure happened, for callers that must tell them apart (the oracle's verdicts): a
// reported error, a process killed by a signal, or a run that exceeded its time limit.
// Setup: the tool's own failure around an engine run (a temporary folder, writing the candidate or
// its inputs, starting the engine's process), never the engine's verdict on the model.
enum class ErrorKind { Error, Crash, Timeout, Setup };

// A user-facing problem. `where` is the file (or other subject) and `what` the problem, so
// the CLI can print the one-line form `error: <where>: <what>`.
struct Error {
  std::string where;
  std::string what;
  ErrorKind kind = ErrorKind::Error;
  int signal = 0;  // for ErrorKind::Crash: the signal that ended the run
  // A limit of the engine's release, in a few words ("IR version 10, it reads up to 9"), when the
  // engine refused the model for one (a format or opset newer than it knows, no kernel for an
  // operator and its types, a type its binding cannot pass): the release cannot take the model,
  // which is not a wrong answer. Empty for every other error.
  std::string limit = {};

  std::string message() const { return where.empty() ? what : where + ": " + what; }
  // Returns a copy with `where` set, unless it already names something more precise.
  Error at(const std::string& subject) const {
    Error e = *this;
    if (e.where.empty()) e.where = subject;
    return e;
  }
};

inline Error make_error(std::string what) { return Error{{}, std::move(what)}; }

template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { assert(!ok()); return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Expected<void>.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}
  static Status success() { return Status(); }

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { assert(!ok_); return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

// The same status or value, an error marked as the tool's own (ErrorKind::Setup).
inline Status as_setup(Status s) {
  if (s.ok()) return s;
  Error e = s.error();
  e.kind = ErrorKind::Setup;
  return e;
}
template <typename T>
Expected<T> as_setup(Expected<T> x) {
  if (x.ok()) return x;
  Error e = x.error();
  e.kind = ErrorKind::Setup;
  return e;
}

}  // namespace reduce

// Propagates a failed Status/Expected from the current function.
#define REDUCE_TRY(expr)                                  \
  do {                                                    \
    auto&& reduce_try_result_ = (expr);                   \
    if (!reduce_try_result_.ok()) return reduce_try_result_.error(); \
  } while (0)

#define REDUCE_CONCAT_INNER(a, b) a##b
#define REDUCE_CONCAT(a, b) REDUCE_CONCAT_INNER(a, b)
// `REDUCE_ASSIGN(auto x, f());` binds the value of f() or returns its error.
#define REDUCE_ASSIGN(decl, expr) REDUCE_ASSIGN_IMPL(REDUCE_CONCAT(reduce_tmp_, __LINE__), decl, expr)
#define REDUCE_ASSIGN_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                        \
  if (!tmp.ok()) return tmp.error();        \
  decl = std::move(tmp).value()
