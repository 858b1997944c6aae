// `--json`: one JSON document on stdout instead of the text a command prints (check, compare, run, info).
#pragma once

#include <nlohmann/json.hpp>

#include <iostream>
#include <sstream>
#include <string>

#include "core/model.h"
#include "oracle/error_origin.h"
#include "oracle/verdict.h"

namespace reduce::cli {

using Json = nlohmann::ordered_json;

// The schema number of every --json document (`schema`): raised only when a key changes meaning or goes away.
inline constexpr int kJsonSchema = 1;

// A verdict: `verdict` ("pass", "fail", "invalid"), `kind`, `signature`, `message`, `cannot_take`,
// `runs`/`failing_runs`, and per output its comparison. Non-finite numbers are null.
Json verdict_json(const Verdict& v);

// Where error is born (`reduce compare`): per value its node, op type, accumulated and local error
// over the tolerance (null: not run alone; non-finite scores as null with `nonfinite`), then the
// findings (first non-finite value, where it is born, the worst output and its sources, the top local
// errors) as value names.
Json origin_json(const ErrorOrigin& origin, const Graph& graph);

// A tensor: name, dtype, shape, elements, and over its finite elements min, max, mean (NaN and Inf counted).
Json tensor_json(const std::string& name, const Tensor& t);

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
