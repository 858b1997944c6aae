// `--json`: one JSON document on stdout instead of the text a command prints (check, compare, run, info).
#pragma once

#include <nlohmann/json.hpp>

#include <iostream>
#include <sstream>
#include <string>

#include "oracle/verdict.h"

namespace reduce::cli {

using Json = nlohmann::ordered_json;

// The schema number of every --json document (`schema`): raised only when a key changes meaning or goes away.
inline constexpr int kJsonSchema = 1;

// A verdict: `verdict` ("pass", "fail", "invalid"), `kind`, `signature`, `message`, `cannot_take`,
// `runs`/`failing_runs`, and per output its comparison. Non-finite numbers are null.
Json verdict_json(const Verdict& v);

// While `on`, what the command prints on stdout is held back (the text output), and `print` writes the
// document instead, with `exit_code` added; stderr (notes, errors) is untouched. A command that ends
// on an error before `print` leaves stdout empty: its exit code and stderr say why.
class JsonOutput {
 public:
  JsonOutput(bool on, const std::string& command);
  ~JsonOutput();
  JsonOutput(const JsonOutput&) = delete;
  JsonOutput& operator=(const JsonOutput&) = delete;

  bool on() const { return on_; }
  Json& doc() { return doc_; }
  // Prints the document (when on) and returns `exit_code`.
  int print(int exit_code);

 private:
  bool on_;
  Json doc_;
  std::ostringstream held_;
  std::streambuf* stdout_ = nullptr;
};

}  // namespace reduce::cli
