// `--json` documents (json_output.h).
#include "json_output.h"

#include <cmath>

#include "tensor_summary.h"

namespace reduce::cli {

namespace {

Json number(double x) { return std::isfinite(x) ? Json(x) : Json(); }

}  // namespace

Json verdict_json(const Verdict& v) {
  Json j;
  j["verdict"] = v.invalid ? "invalid" : v.signature.fails() ? "fail" : "pass";
  j["kind"] = std::string(to_string(v.signature.kind));
  j["signature"] = v.signature.fails() ? Json(v.signature.to_string()) : Json();
  j["message"] = v.invalid ? v.invalid_reason : v.signature.message;
  j["cannot_take"] = v.cannot_take.empty() ? Json() : Json(v.cannot_take);
  j["runs"] = v.runs;
  j["failing_runs"] = v.runs > 1 ? Json(v.failing_runs) : Json(v.signature.fails() ? 1 : 0);
  Json outputs = Json::array();
  for (const auto& o : v.outputs)
    outputs.push_back({{"name", o.name},
                       {"passed", o.passed},
                       {"elements", o.elements},
                       {"mismatched", o.mismatched},
                       {"max_abs", number(o.max_abs)},
                       {"max_rel", number(o.max_rel)},
                       {"error_over_tolerance", number(o.ratio)},
                       {"nan", o.nan},
                       {"inf", o.inf},
                       {"nonfinite_new", o.nonfinite_new},
                       {"structural_problem", o.structural_problem}});
  j["outputs"] = outputs;
  return j;
}

Json tensor_json(const std::string& name, const Tensor& t) {
  const TensorStats s = tensor_stats(t);
  return {{"name", name}, {"dtype", std::string(dtype_name(t.dtype()))}, {"shape", t.shape()}, {"elements", t.elements()},
          {"min", s.finite ? Json(s.min) : Json()}, {"max", s.finite ? Json(s.max) : Json()},
          {"mean", s.finite ? Json(s.mean) : Json()}, {"nan", s.nan}, {"inf", s.inf}};
}

Json origin_json(const ErrorOrigin& origin, const Graph& graph) {
  const auto name = [&](std::optional<size_t> k) { return k ? Json(origin.values[*k].value) : Json(); };
  const auto names = [&](const std::vector<size_t>& ks) {
    Json out = Json::array();
    for (size_t k : ks) out.push_back(origin.values[k].value);
    return out;
  };
  Json values = Json::array();
  for (const auto& v : origin.values) {
    const Node& n = graph.nodes[v.node];
    const double acc = error_score(v.accumulated);
    const double loc = v.local ? error_score(*v.local) : NAN;
    values.push_back({{"value", v.value},
                      {"node", n.name},
                      {"op_type", n.op_type},
                      {"accumulated", number(acc)},
                      {"accumulated_nonfinite", std::isinf(acc)},
                      {"local", number(loc)},
                      {"local_nonfinite", std::isinf(loc)},
                      {"local_problem", v.local_problem},
                      {"out_of_range", v.out_of_range},
                      {"unfed_input", v.unfed_input}});
  }
  return {{"values", values},
          {"first_nonfinite", name(origin.first_nonfinite)},
          {"nonfinite_born", name(origin.nonfinite_born)},
          {"worst_output", name(origin.worst_output)},
          {"sources", names(origin.sources)},
          {"top_local", names(origin.top_local)},
          {"local_runs", origin.local_runs},
          {"nodes_not_run_alone", origin.nodes_skipped}};
}

JsonOutput::JsonOutput(bool on, const std::string& command) : on_(on) {
  if (!on_) return;
  doc_["schema"] = kJsonSchema;
  doc_["command"] = command;
  stdout_ = std::cout.rdbuf(held_.rdbuf());
}

JsonOutput::~JsonOutput() {
  if (stdout_) std::cout.rdbuf(stdout_);
}

int JsonOutput::print(int exit_code) {
  if (!on_) return exit_code;
  if (stdout_) std::cout.rdbuf(stdout_), stdout_ = nullptr;
  doc_["exit_code"] = exit_code;
  // Engine messages may hold any bytes: invalid UTF-8 is replaced, never an exception.
  std::cout << doc_.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  return exit_code;
}

}  // namespace reduce::cli
